package flightgraph_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/flightgraph/flightgraph"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestReadJSONBoundsDecodedBytes: a gzip body is bounded after decoding, so a zip bomb under the
// bound as sent is refused with REQ_413.000 having read only the few bytes that decode to the
// bound, far from the whole body; a gzip body within the bound decodes as an identity one does.
func TestReadJSONBoundsDecodedBytes(t *testing.T) {
	const limit = 64 << 10
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write([]byte(`{"query": "`))
	zw.Write(bytes.Repeat([]byte{'a'}, 32<<20))
	zw.Write([]byte(`"}`))
	zw.Close()
	if gz.Len() >= limit {
		t.Fatalf("the bomb is %d bytes as sent: the bound on what is sent would refuse it", gz.Len())
	}
	body := &countingReader{r: bytes.NewReader(gz.Bytes())}
	r := httptest.NewRequest(http.MethodPost, "/graphql", body)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-Encoding", "gzip")
	var v map[string]any
	err := flightgraph.ReadJSON(httptest.NewRecorder(), r, limit, &v, "one object")
	if flightgraph.ErrorCode(err) != flightgraph.ECodeBodyTooLarge {
		t.Fatalf("a bomb of %d bytes decoding to 32 MiB: %v", gz.Len(), err)
	}
	if body.n > 8<<10 {
		t.Errorf("read %d of the bomb's %d bytes to refuse it", body.n, gz.Len())
	}

	var small bytes.Buffer
	zw = gzip.NewWriter(&small)
	zw.Write([]byte(`{"query": "{ __typename }"}`))
	zw.Close()
	r = httptest.NewRequest(http.MethodPost, "/graphql", &small)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-Encoding", "GZIP")
	if err := flightgraph.ReadJSON(httptest.NewRecorder(), r, limit, &v, "one object"); err != nil || v["query"] != "{ __typename }" {
		t.Errorf("a small gzip body: %v, %v", err, v)
	}
}
