package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/access"
)

// childEnv names the variable that makes the test binary run flightgraph itself, with the
// arguments in childArgs: a real process to send signals to.
const (
	childEnv  = "FLIGHTGRAPH_TEST_CHILD"
	childArgs = "FLIGHTGRAPH_TEST_CHILD_ARGS"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "serve" {
		os.Exit(mainWith(strings.Fields(os.Getenv(childArgs))))
	}
	os.Exit(m.Run())
}

// raiseRates gives the demo key's subscriptions the most an operator may grant, through the
// portal as people do: the demo developer asks for higher limits, the demo operator grants them.
func raiseRates(t *testing.T, base string, creds map[string]string) {
	t.Helper()
	portal := base + "/portal/graphql"
	signIn := func(email, password string) map[string]string {
		var d struct{ SignIn struct{ Token string } }
		gql(t, portal, nil, `mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { token } }`, map[string]any{"e": email, "p": password}, &d)
		return map[string]string{"Authorization": "Bearer " + d.SignIn.Token}
	}
	dev, op := signIn(creds["developerEmail"], creds["developerPassword"]), signIn(creds["operatorEmail"], creds["operatorPassword"])
	var me struct {
		Me struct {
			Applications []struct {
				Keys []struct {
					APIKey        string
					Subscriptions []struct{ ID, Status string }
				}
			}
		}
	}
	gql(t, portal, dev, `{ me { applications { keys { apiKey subscriptions { id status } } } } }`, nil, &me)
	var asks, grants []string
	vars := map[string]any{}
	for _, app := range me.Me.Applications {
		for _, k := range app.Keys {
			for _, sub := range k.Subscriptions {
				if k.APIKey != access.Hint(creds["apiKey"]) || sub.Status != "approved" {
					continue
				}
				n := strconv.Itoa(len(asks))
				asks = append(asks, `a`+n+`: requestLimitIncrease(input: {subscriptionId: "`+sub.ID+`", description: "Load test.", estimatedPerSecond: 10000, estimatedPerDay: 1000000000}) { id }`)
				grants = append(grants, `g`+n+`: reviewLimitIncrease(id: $a`+n+`, approve: true, perSecond: 10000, perDay: 1000000000, reply: "Granted.") { status }`)
			}
		}
	}
	var asked map[string]struct{ ID string }
	gql(t, portal, dev, `mutation { `+strings.Join(asks, " ")+` }`, nil, &asked)
	var decl []string
	for i := range grants {
		n := strconv.Itoa(i)
		decl, vars["a"+n] = append(decl, "$a"+n+": ID!"), asked["a"+n].ID
	}
	var granted map[string]struct{ Status string }
	gql(t, portal, op, `mutation(`+strings.Join(decl, ", ")+`) { `+strings.Join(grants, " ")+` }`, vars, &granted)
	if len(granted) == 0 {
		t.Fatal("raiseRates: the demo key has no approved subscription")
	}
}

// TestSIGTERMUnderLoad sends SIGTERM to a flightgraph process under load, with a load balancer's
// behaviour in front of it: it polls /readyz and sends no new request once that fails. Every
// request gets its answer: the ones sent before the balancer noticed, and one in flight across the
// listener's close (its body still arriving); /readyz says draining meanwhile; the process exits
// 0 once in-flight work is done.
func TestSIGTERMUnderLoad(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=serve", "FLIGHTGRAPH_DATA_DIR="+dir,
		childArgs+"=--addr 127.0.0.1:0 --metrics-addr= --roll-every 0 --drain-period 1s --shutdown-grace 10s")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var base string
	select {
	case base = <-urls:
	case err := <-exited:
		t.Fatalf("flightgraph exited before listening: %v\n%s", err, stderr.String())
	case <-time.After(3 * time.Minute):
		t.Fatalf("flightgraph did not listen:\n%s", stderr.String())
	}
	creds := demoCredentials(t, dir)
	key := creds["apiKey"]
	raiseRates(t, base, creds)

	// The load balancer: it polls /readyz and closes the gate at the first failure.
	var (
		open      atomic.Bool
		readiness sync.Map // body → true
	)
	open.Store(true)
	poller := &http.Client{Timeout: time.Second}
	stopPolling := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stopPolling:
				return
			case <-time.After(50 * time.Millisecond):
			}
			resp, err := poller.Get(base + "/readyz")
			if err != nil {
				open.Store(false)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			readiness.Store(strings.TrimSpace(string(b)), true)
			if resp.StatusCode != http.StatusOK {
				open.Store(false)
			}
		}
	})

	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	query, _ := json.Marshal(map[string]any{"query": `{ airport(code: "AMS") { name } }`})
	var (
		mu       sync.Mutex
		failures []string
		served   atomic.Int64
		signaled atomic.Bool
		afterSig atomic.Int64
	)
	fail := func(f string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(f, args...))
		mu.Unlock()
	}
	post := func(body io.Reader) {
		req, _ := http.NewRequest(http.MethodPost, base+"/graphql", body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("api-key", key)
		resp, err := client.Do(req)
		if err != nil {
			fail("transport error: %v", err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Schiphol") {
			fail("%d %.200s", resp.StatusCode, b)
			return
		}
		served.Add(1)
		if signaled.Load() {
			afterSig.Add(1)
		}
	}
	// Four clients, each at most a request a millisecond: an idle machine answers this query
	// over 10,000 times a second, the most a plan may grant, and the plan's 429s are no part of
	// what this test is about.
	for range 4 {
		wg.Go(func() {
			for open.Load() {
				post(strings.NewReader(string(query)))
				time.Sleep(time.Millisecond)
			}
		})
	}
	time.Sleep(time.Second)

	// A request in flight across the listener's close: its body arrives over 1.5 s.
	slow := make(chan struct{})
	go func() {
		defer close(slow)
		pr, pw := io.Pipe()
		go func() {
			half := len(query) / 2
			pw.Write(query[:half])
			time.Sleep(1500 * time.Millisecond)
			pw.Write(query[half:])
			pw.Close()
		}()
		post(pr)
	}()
	time.Sleep(100 * time.Millisecond)
	signaled.Store(true)
	sigAt := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-slow
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("flightgraph exited with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("flightgraph did not exit after SIGTERM:\n%s", stderr.String())
	}
	exitAfter := time.Since(sigAt)
	close(stopPolling)
	open.Store(false)
	wg.Wait()

	for _, f := range failures {
		t.Error(f)
	}
	if _, ok := readiness.Load(`{"status":"draining"}`); !ok {
		t.Error("/readyz never said it was draining")
	}
	if !strings.Contains(stderr.String(), "draining") {
		t.Errorf("the log does not say it drains:\n%s", stderr.String())
	}
	t.Logf("%d requests served, %d of them after SIGTERM, %d failed; exited %v after SIGTERM",
		served.Load(), afterSig.Load(), len(failures), exitAfter.Round(time.Millisecond))
}
