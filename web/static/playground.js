// The playground: GraphiQL over this server's /graphql, with the Departures board as the first
// example. Served from this origin with everything it loads (see web.go); no request leaves it.
(function () {
  "use strict";
  // The examples are in the page's <template>; each asks for a date some days ahead.
  var examples = Array.prototype.map.call(document.getElementById("examples").content.querySelectorAll("[data-example]"), function (ex) {
    var date = new Date(Date.now() + Number(ex.dataset.days) * 86400000).toISOString().slice(0, 10);
    var vars = ex.dataset.example === "departures" ? { date: date, first: 10 } : { date: date };
    return { query: ex.textContent.trim(), variables: JSON.stringify(vars, null, 2) };
  });
  var fetcher = GraphiQL.createFetcher({ url: "/graphql" });
  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  root.render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultQuery: examples[0].query,
      variables: examples[0].variables,
      defaultHeaders: JSON.stringify({ "api-key": "" }, null, 2),
      defaultEditorToolsVisibility: true,
      shouldPersistHeaders: false,
      defaultTabs: examples,
    })
  );
})();
