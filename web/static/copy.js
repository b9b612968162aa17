// Copy buttons: <button data-copy="input-id"> copies that input's value and says so.
(function () {
  "use strict";
  document.querySelectorAll("[data-copy]").forEach(function (b) {
    b.addEventListener("click", function () {
      var input = document.getElementById(b.dataset.copy);
      var done = function () { b.textContent = "Copied"; };
      if (navigator.clipboard) {
        navigator.clipboard.writeText(input.value).then(done, function () { input.select(); });
      } else {
        input.select();
      }
    });
  });
})();
