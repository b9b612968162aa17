package server_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestTryItEveryOperation: the demo developer, in Chromium, opens Try it and, for every API they
// hold and every operation of it, presses "Try it" on the form as the page fills it from
// /openapi.json, changing nothing: every answer is 2xx. The server's clock is storetest.Now and
// the browser's the real one, so the forms' dates must come from the document (the server's
// clock), not from the page.
func TestTryItEveryOperation(t *testing.T) {
	tab := browser(t)
	s := newServer(t, storetest.SeededWindow(t, store.SQLite, os.Getenv, 1, examplesWindow))
	dev := open(t, tab, s.URL)
	dev.visit("/portal/signin", "#email")
	dev.do("sign in", chromedp.SetValue(chromedp.CSS("#email"), s.demo.DeveloperEmail), chromedp.SetValue(chromedp.CSS("#password"), s.demo.DeveloperPassword))
	dev.submit(`form[action="/portal/signin"] button`, "article.app")
	dev.visit("/portal/try", "#try-api")
	dev.wait("the first API's operations", `document.querySelectorAll("#try-op option").length > 0`)

	apis := strings.Fields(dev.eval(`[...document.querySelectorAll("#try-api option")].map(o => o.value).join(" ")`))
	if len(apis) < 6 {
		t.Errorf("Try it offers the demo developer %d APIs (%v), want the six public ones", len(apis), apis)
	}
	start := time.Now()
	var failed []string
	n := 0
	for _, api := range apis {
		// The operations of the API come once its description is read: the list is emptied first
		// so that the wait sees the new one.
		dev.eval(`(() => { const s = document.getElementById("try-api"); document.getElementById("try-op").textContent = "";
  s.value = ` + strconv.Quote(api) + `; s.dispatchEvent(new Event("change")); return "" })()`)
		dev.wait(api+"'s operations", `document.querySelectorAll("#try-op option").length > 0`)
		ops := dev.eval(`[...document.querySelectorAll("#try-op option")].map(o => o.text).join("\n")`)
		for i, op := range strings.Split(ops, "\n") {
			n++
			dev.eval(`(() => { const s = document.getElementById("try-op"); s.value = "` + strconv.Itoa(i) + `"; s.dispatchEvent(new Event("change"));
  document.getElementById("try-status").textContent = ""; document.getElementById("try-state").textContent = ""; return "" })()`)
			dev.do("try "+op, chromedp.Click(chromedp.CSS("#try-send")))
			dev.wait("the answer of "+op, `document.getElementById("try-status").textContent !== "" || /^(The call failed|Fill in)/.test(document.getElementById("try-state").textContent)`)
			status := dev.text("#try-status")
			if code, _ := strconv.Atoi(strings.Fields(status + " 0")[0]); code < 200 || code > 299 {
				failed = append(failed, op)
				t.Errorf("%s: Try it on %s as the form starts answered %q (%s): %.400s\nthe request: %.600s", api, op, status, dev.text("#try-state"), dev.text("#try-response"), dev.text("#try-request"))
			}
		}
	}
	t.Logf("Try it, as each form starts: %d of %d operations of %d APIs answered 2xx, in %v", n-len(failed), n, len(apis), time.Since(start).Round(time.Millisecond))
	if n == 0 {
		t.Fatal("Try it listed no operations")
	}
}
