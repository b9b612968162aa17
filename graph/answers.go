package graph

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/live"
)

// Answers keeps the answers of the operations that read nothing but the schema: introspection
// (__schema, __type), the federation SDL (_service) and __typename. Such an answer never changes
// for a caller's audience (access.Audience: which APIs it may see, which decides its
// schema: Views), so it is computed once per audience, document, variables and operation name, and
// served from memory with an ETag; the transport answers a GET whose If-None-Match names it with
// 304 and no body. A full introspection costs tens of milliseconds of CPU; from memory it costs
// what copying its bytes does.
//
// It is a response interceptor: it runs after the Gate admitted the call, so the call is held to
// its caller's uncharged budgets and counted before the cache is asked; it is registered after
// the other extensions that intercept responses, if any, so that they run on a kept answer too.
// Memory is bounded: at most MaxAnswers answers and MaxAnswerBytes bytes of them, the least
// recently used going first; an answer larger than a sixteenth of that is not kept.
//
// With a response cache (NewAnswers' responses, nil when --response-cache-mb is 0) it also keeps
// the answer of any other query whose cache policy (CacheControl) is public and cacheable, per
// audience, point of sale, document, operation name and variables, up to its max-age; the
// flights it read tag it, so that the status feed evicts it (live.Cache). A private answer is not
// kept: it is the caller's own; but for a quote (every root field heavy work: inspiration,
// calendars, deals, the feed), which prices its offers at the second it runs and is the same for
// every caller of the key within that second, kept for that second only, as REST keeps its heavy
// routes' (rest.API.answered). A kept answer is served with its policy and its Age (the
// transport); the per-call extensions (cost, limits) are the Gate's, outside, on every call.
type Answers struct {
	responses *live.Cache
	// EnterHeavy takes a heavy-work slot for the request of ctx (access.Guard.EnterHeavy): for a
	// quote admitted without one (quoteKept) whose kept answer is not, or no longer, its answer.
	// Nil admits no quote without its slot.
	EnterHeavy func(ctx context.Context) error

	mu    sync.Mutex
	kept  *simplelru.LRU[answerKey, *answer]
	bytes int
}

// MaxAnswers and MaxAnswerBytes bound what an Answers keeps: a few audiences times a few
// documents (GraphiQL's, a router's SDL, a code generator's), about 150 KB each for a whole
// introspection.
const (
	MaxAnswers     = 256
	MaxAnswerBytes = 16 << 20
)

// answerKey names a kept answer: the audience, and a hash of the document, the operation's
// name and the variables.
type answerKey struct {
	audience string
	request  [sha256.Size]byte
}

// answer is a kept answer: its data as gqlgen encoded it, and the data's ETag.
type answer struct {
	data json.RawMessage
	etag string
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
	graphql.ResponseInterceptor
} = (*Answers)(nil)

// NewAnswers returns an empty Answers that keeps public answers in responses too, when not nil.
func NewAnswers(responses *live.Cache) *Answers {
	a := &Answers{responses: responses}
	a.kept, _ = simplelru.NewLRU(MaxAnswers, func(_ answerKey, v *answer) { a.bytes -= cap(v.data) })
	return a
}

// ExtensionName implements graphql.HandlerExtension.
func (a *Answers) ExtensionName() string { return "Answers" }

// Validate implements graphql.HandlerExtension.
func (a *Answers) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptResponse implements graphql.ResponseInterceptor: a kept answer, or the executed one,
// kept when it has no errors.
func (a *Answers) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	key, ok := answerKeyOf(ctx)
	if !ok {
		if a.responses != nil {
			return a.respond(ctx, next)
		}
		return next(ctx)
	}
	a.mu.Lock()
	kept, hit := a.kept.Get(key)
	a.mu.Unlock()
	if hit {
		tagAnswer(ctx, kept.etag)
		return &graphql.Response{Data: kept.data, Extensions: graphql.GetExtensions(ctx)}
	}
	resp := next(ctx)
	if resp == nil || len(resp.Errors) > 0 || len(resp.Data) == 0 || resp.HasNext != nil || resp.Label != "" || resp.Path != nil || ctx.Err() != nil {
		return resp
	}
	kept = &answer{data: resp.Data, etag: flightgraph.ETag(resp.Data)}
	// Counted by what it holds (its capacity), which may be more than it says.
	if cap(kept.data) <= MaxAnswerBytes/16 {
		a.mu.Lock()
		if old, ok := a.kept.Peek(key); ok {
			a.bytes -= cap(old.data) // Add replaces it without evicting
		}
		a.kept.Add(key, kept)
		a.bytes += cap(kept.data)
		for a.bytes > MaxAnswerBytes {
			a.kept.RemoveOldest()
		}
		a.mu.Unlock()
	}
	tagAnswer(ctx, kept.etag)
	return resp
}

// respond answers a query from the response cache, or executes it and keeps its answer there
// when its policy is public (see Answers).
func (a *Answers) respond(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	tag, key, keyed := a.lookup(ctx)
	if tag != nil && tag.slotless && !(keyed && tag.found != nil) {
		// Admitted without a slot for a kept quote that is not, or no longer, this operation's
		// answer (its second ended, or a change evicted it): it takes its slot now, before any
		// work, or is refused as the Gate would have refused it.
		if err := a.EnterHeavy(ctx); err != nil {
			graphql.AddError(ctx, err)
			return &graphql.Response{Errors: graphql.GetErrors(ctx), Extensions: graphql.GetExtensions(ctx)}
		}
		if keyed && tag.found == nil {
			// Another call may have made this second's answer while this one waited for its
			// slot: a quote not kept runs its search only once it holds a slot, and so looks
			// after taking it.
			tag.found, _ = a.responses.Get(key)
		}
	}
	if !keyed {
		return next(ctx)
	}
	if kept := tag.found; kept != nil {
		tag.policy, tag.age, tag.kept = kept.Policy, kept.Age(a.responses.Now()), true
		ext := map[string]any{}
		for k, v := range graphql.GetExtensions(ctx) {
			ext[k] = v
		}
		ext["cacheControl"] = kept.Extra
		return &graphql.Response{Data: kept.Body, Extensions: ext}
	}
	ticket := a.responses.Begin()
	resp := next(ctx)
	if resp == nil || len(resp.Errors) > 0 || len(resp.Data) == 0 || resp.HasNext != nil || resp.Label != "" || resp.Path != nil || ctx.Err() != nil {
		return resp
	}
	a.responses.Put(ticket, key, &live.Kept{Body: resp.Data, Policy: tag.policy, Extra: resp.Extensions["cacheControl"], Stored: a.responses.Now(),
		Until: tag.until}, flightgraph.CacheTagsFromContext(ctx).List())
	return resp
}

// InterceptOperation implements graphql.OperationInterceptor: the response cache is asked as the
// operation starts, so that a kept answer's request skips the planning of an execution it will
// not run (PlanPrefetch).
func (a *Answers) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if a.responses != nil {
		a.lookup(ctx)
	}
	return next(ctx)
}

// lookup returns the key of the operation of ctx in the response cache, and its tag with the
// kept answer found under it (found, nil for none), looked up once per request; keyed is false
// when the answer is not one for the response cache: not the HTTP transport's (a stream's), not
// a query, not admitted whole (it is executed, so that the Gate's second line refuses what it
// must), or nothing records what it reads.
func (a *Answers) lookup(ctx context.Context) (tag *answerTag, key live.CacheKey, keyed bool) {
	tag, ok := ctx.Value(answerTagKey{}).(*answerTag)
	if !ok {
		return nil, key, false
	}
	if tag.looked {
		return tag, tag.key, tag.keyed
	}
	tag.looked = true
	if flightgraph.CacheTagsFromContext(ctx) == nil || !graphql.HasOperationContext(ctx) {
		return tag, key, false
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Query || !admittedWhole(ctx, oc) {
		return tag, key, false
	}
	adm, _ := oc.Stats.GetExtension(costExtension).(admitted)
	if adm.quote {
		tag.until = a.responses.QuoteUntil()
	}
	if adm.quote && tag.slotless {
		tag.key, tag.keyed = tag.quoteKey, true // the Gate's look-up made it, of this request
	} else if tag.key, tag.keyed = responseKey(ctx, oc, adm.quote); !tag.keyed {
		return tag, key, false
	}
	tag.found, _ = a.responses.Get(tag.key)
	return tag, tag.key, true
}

// responseKey is the response cache's key of the operation oc: the caller's audience, the point
// of sale, the document, the operation's name, the variables, and whether it is a quote (the
// second is not in the key: each second's answer takes the place of the last).
func responseKey(ctx context.Context, oc *graphql.OperationContext, quote bool) (live.CacheKey, bool) {
	vars, err := json.Marshal(oc.Variables) // map keys sorted: one spelling per set of values
	if err != nil {
		return live.CacheKey{}, false
	}
	q := ""
	if quote {
		q = "quote"
	}
	pos := flightgraph.PointOfSaleFromContext(ctx)
	return live.KeyOf("graphql", access.Audience(flightgraph.CallerFromContext(ctx).Role()),
		pos.Country, pos.Currency, string(pos.Language), pos.Brand, oc.RawQuery, oc.OperationName, string(vars), q), true
}

// quoteKept implements Gate.QuoteKept: whether the response cache keeps the answer of the quote
// oc, charged to products, looked up as lookup will look it up once the Gate admitted it. It
// leaves the key in the request's answer tag, so that respond serves that answer only, and takes
// the slot before any work when it is not there then. Only a call lookup may key is looked up:
// over HTTP, a query of some product, a caller that is not anonymous and whose credential is
// good (whether the products are its own, the Gate's Admit decides next, and lookup checks
// again). It counts no lookup (live.Cache.Fresh): lookup's is the call's.
func (a *Answers) quoteKept(ctx context.Context, oc *graphql.OperationContext, products []string) bool {
	tag, ok := ctx.Value(answerTagKey{}).(*answerTag)
	if !ok || a.responses == nil || a.EnterHeavy == nil || flightgraph.CacheTagsFromContext(ctx) == nil ||
		oc.Operation == nil || oc.Operation.Operation != ast.Query || len(products) == 0 {
		return false
	}
	if pass := access.PassFromContext(ctx); pass == nil || pass.AuthErr != nil ||
		flightgraph.CallerFromContext(ctx).Kind == flightgraph.CallerAnonymous {
		return false
	}
	key, ok := responseKey(ctx, oc, true)
	if !ok || !a.responses.Fresh(key) {
		return false
	}
	tag.slotless, tag.quoteKey = true, key
	return true
}

// admittedWhole reports whether the Gate's first line admitted and charged the operation of oc,
// and every API it was charged for is the caller's, as the second line would find at each root
// field: a kept answer skips execution, and so the second line, which must then refuse nothing.
// An anonymous caller's operation is never answered from memory.
func admittedWhole(ctx context.Context, oc *graphql.OperationContext) bool {
	a, ok := oc.Stats.GetExtension(costExtension).(admitted)
	if !ok || len(a.charge.Products) == 0 || flightgraph.CallerFromContext(ctx).Kind == flightgraph.CallerAnonymous {
		return false
	}
	for _, p := range a.charge.Products {
		if access.Require(ctx, p) != nil {
			return false
		}
	}
	return true
}

// schemaFields are the root fields whose answers depend on the schema only.
var schemaFields = map[string]bool{"__schema": true, "__type": true, "_service": true, "__typename": true}

// answerKeyOf returns the key of the operation of ctx when its answer depends on nothing but the
// caller's audience and the request: a query whose root fields, as execution collects them, are
// all schemaFields and read the schema (not __typename alone, which is not worth keeping), for a
// caller that may introspect.
func answerKeyOf(ctx context.Context) (answerKey, bool) {
	if !graphql.HasOperationContext(ctx) {
		return answerKey{}, false
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Query || oc.DisableIntrospection {
		return answerKey{}, false
	}
	schema := false
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Query"}) {
		if !schemaFields[f.Name] {
			return answerKey{}, false
		}
		schema = schema || f.Name != "__typename"
	}
	if !schema {
		return answerKey{}, false
	}
	vars, err := json.Marshal(oc.Variables) // map keys sorted: one spelling per set of values
	if err != nil {
		return answerKey{}, false
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(oc.RawQuery), []byte(oc.OperationName), vars} {
		h.Write(part)
		h.Write([]byte{0})
	}
	key := answerKey{audience: access.Audience(flightgraph.CallerFromContext(ctx).Role())}
	h.Sum(key.request[:0])
	return key, true
}

type answerTagKey struct{}

// answerTag is where the transport learns about the answer of an operation: the ETag of a kept
// answer, and the cache policy of a query's (CacheControl).
type answerTag struct {
	etag   string
	policy flightgraph.CachePolicy
	// kept says the answer came from the response cache, made age seconds ago.
	kept bool
	age  int
	// The response cache's lookup (Answers.lookup): done once, the key when keyed, and the
	// kept answer found; for a quote, the end of the second it is kept for.
	looked, keyed bool
	key           live.CacheKey
	found         *live.Kept
	until         time.Time
	// slotless says the Gate admitted the operation without a heavy-work slot, for the kept
	// quote of quoteKey (Answers.quoteKept).
	slotless bool
	quoteKey live.CacheKey
}

// answerKept reports whether the operation of ctx will be answered from the response cache.
func answerKept(ctx context.Context) bool {
	t, ok := ctx.Value(answerTagKey{}).(*answerTag)
	return ok && t.found != nil
}

// withAnswerTag returns ctx with a place for the ETag of its answer, and that place.
func withAnswerTag(ctx context.Context) (context.Context, *answerTag) {
	t := &answerTag{}
	return context.WithValue(ctx, answerTagKey{}, t), t
}

// tagAnswer tells the transport the ETag of the answer of ctx.
func tagAnswer(ctx context.Context, etag string) {
	if t, ok := ctx.Value(answerTagKey{}).(*answerTag); ok {
		t.etag = etag
	}
}

// tagPolicy tells the transport the cache policy of the answer of ctx.
func tagPolicy(ctx context.Context, p flightgraph.CachePolicy) {
	if t, ok := ctx.Value(answerTagKey{}).(*answerTag); ok {
		t.policy = p
	}
}
