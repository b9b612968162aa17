// Command gen generates the flight subgraph's executor (graph/generated.go) and its resolver
// stubs from gqlgen.yml as `gqlgen generate` does, then replaces some of gqlgen's calls in the
// executor with graph's own, of the same meaning (graph/lists.go, graph/objects.go):
//
//   - graphql.MarshalSliceConcurrently, which starts a goroutine for every element of a list of
//     objects whatever the element's fields, by marshalList;
//   - graphql.GetPath, which every object computes (allocating its path) for the @defer groups it
//     hands to ProcessDeferredGroup even when it has none, by deferredPath, which also takes the
//     groups and builds the path only for some (ProcessDeferredGroup reads it only then);
//   - the FieldSet an object returns, which keeps a map of the aliases it writes, by object
//     (graph/objects.go), of its fields and values, and the FieldSet, its values and the object,
//     three allocations for every object, by the operation's objects, which hands them out from
//     chunks;
//   - the FieldSet and the map of views every object makes for its deferred fields, by nil ones
//     that deferredFields and deferredViews make when a field is deferred (ProcessDeferredGroup
//     reads neither when there are no views);
//   - the query's answer marshalled into a buffer grown from nothing, by marshalData, which sizes
//     it ahead;
//   - a field's arguments made for every object it is resolved on, by fieldArgs, which makes
//     them once per field of the operation.
//
// Each call must be found, else gqlgen generates otherwise now and this needs a look.
//
// It then gives every leaf field read from its object's struct (no resolver, no directive, a
// scalar or enum whose marshaller reads nothing but the value) a path around graphql.ResolveField
// (inlineLeaves), and every other field without directive middleware a path that does what
// ResolveField does without its closures (inlineFields): see plainField in graph/leaves.go for
// what the paths skip and when they are taken.
//
// Run it from the repository's root: go generate ./...
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"regexp"
	"strings"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"
)

// replaced are gqlgen's calls and ours, in the order they are replaced.
var replaced = []struct{ gqlgen, ours string }{
	{"graphql.MarshalSliceConcurrently(", "marshalList("},
	{"Path:     graphql.GetPath(ctx),", "Path:     deferredPath(ctx, deferLabelToView),"},
	{"type executionContext struct {\n\t*graphql.ExecutionContextState[ResolverRoot, DirectiveRoot, ComplexityRoot]\n}", "type executionContext struct {\n\t*graphql.ExecutionContextState[ResolverRoot, DirectiveRoot, ComplexityRoot]\n\tobjects objects\n}"},
	{"\tout := graphql.NewFieldSet(fields)\n", "\tout, answer := ec.objects.take(ec.OperationContext, fields)\n"},
	{"\n\treturn out\n}", "\n\treturn answer\n}"},
	{"\tdeferredFieldSet := graphql.NewFieldSet(nil)\n", "\tvar deferredFieldSet *graphql.FieldSet\n"},
	{"\tdeferLabelToView := make(map[string]*graphql.FieldSetView)\n", "\tvar deferLabelToView map[string]*graphql.FieldSetView\n"},
	{"deferredFieldSet.AddField(field)", "deferredFieldSet = deferredFields(deferredFieldSet)\ndeferredFieldSet.AddField(field)"},
	{"deferLabelToView[deferrable.Label] = view", "deferLabelToView = deferredViews(deferLabelToView)\ndeferLabelToView[deferrable.Label] = view"},
	{"\t\t\tvar buf bytes.Buffer\n\t\t\tdata.MarshalGQL(&buf)\n\t\t\tresponse.Data = buf.Bytes()\n", "\t\t\tresponse.Data = marshalData(opCtx, data)\n"},
}

func main() {
	if err := generate("gqlgen.yml"); err != nil {
		fmt.Fprintln(os.Stderr, "graph/gen:", err)
		os.Exit(1)
	}
}

func generate(file string) error {
	cfg, err := config.LoadConfig(file)
	if err != nil {
		return err
	}
	if err := api.Generate(cfg); err != nil {
		return err
	}
	src, err := os.ReadFile(cfg.Exec.Filename)
	if err != nil {
		return err
	}
	// marshalList takes gqlgen's arguments, so that a gqlgen whose call differs fails to build
	// rather than running otherwise.
	for _, r := range replaced {
		if !bytes.Contains(src, []byte(r.gqlgen)) {
			return fmt.Errorf("%s has no %q: gqlgen generates otherwise now; see graph/gen's replaced", cfg.Exec.Filename, r.gqlgen)
		}
		src = bytes.ReplaceAll(src, []byte(r.gqlgen), []byte(r.ours))
	}
	// Every field's arguments are made once per operation (fieldArgs), not once per object.
	if n := len(fieldArgsCall.FindAll(src, -1)); n < minArgFields {
		return fmt.Errorf("%s: only %d fields' arguments made from field.ArgumentMap were found (want %d or more): gqlgen generates otherwise now; see graph/args.go", cfg.Exec.Filename, n, minArgFields)
	}
	src = fieldArgsCall.ReplaceAll(src, []byte("fieldArgs(ctx, field, ec.Variables, ec.$1)"))
	src, n, err := inlineLeaves(src)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.Exec.Filename, err)
	}
	if n < minLeaves {
		return fmt.Errorf("%s: only %d leaf fields read from their struct were found (want %d or more): gqlgen generates otherwise now; see graph/leaves.go", cfg.Exec.Filename, n, minLeaves)
	}
	src, n, err = inlineFields(src)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.Exec.Filename, err)
	}
	if n < minFields {
		return fmt.Errorf("%s: only %d other fields without field middleware were found (want %d or more): gqlgen generates otherwise now; see graph/leaves.go", cfg.Exec.Filename, n, minFields)
	}
	return os.WriteFile(cfg.Exec.Filename, src, 0o644)
}

// fieldArgsCall is gqlgen's making of a field's arguments in its field context: $1 the field's
// arguments function.
var fieldArgsCall = regexp.MustCompile(`ec\.(field_\w+_args)\(ctx, field\.ArgumentMap\(ec\.Variables\)\)`)

// minArgFields is fewer than the fields with arguments the schema has (58).
const minArgFields = 40

// minLeaves is fewer than the leaves the schema has (about 190): a gqlgen whose field functions
// no longer match leafField leaves far fewer, and generation fails rather than silently keeping
// the slow path everywhere.
const minLeaves = 100

// leafField is a field function of gqlgen's that reads a struct's field (obj.F) with no resolver
// and no directive, and marshals it with one of the executor's marshallers: $1 is its head, $2
// the struct field, $3 the marshaller, $4 whether the field is non-null.
var leafField = regexp.MustCompile(`(?m)^(func \(ec \*executionContext\) _\w+\(ctx context\.Context, field graphql\.CollectedField, obj \*[\w.]+\) \(ret graphql\.Marshaler\) \{\n)` +
	`\treturn graphql\.ResolveField\(\n\t\tctx,\n\t\tec\.OperationContext,\n\t\tfield,\n` +
	`\t\tfunc\(ctx context\.Context, field graphql\.CollectedField\) \(\*graphql\.FieldContext, error\) \{\n\t\t\treturn ec\.fieldContext_\w+\(ctx, field\)\n\t\t\},\n` +
	`\t\tfunc\(ctx context\.Context\) \(any, error\) \{\n\t\t\treturn obj\.(\w+), nil\n\t\t\},\n` +
	`\t\tnil,\n` +
	`\t\tfunc\(ctx context\.Context, selections ast\.SelectionSet, v [^)]+\) graphql\.Marshaler \{\n\t\t\treturn ec\.([^(\s]+)\(ctx, selections, v\)\n\t\t\},\n` +
	`\t\ttrue,\n\t\t(true|false),\n\t\)\n\}`)

// nonNullScalar is a marshaller of a non-null scalar or enum: $1 its name, $2 the expression that
// marshals v, which adds the schema's error (at the field's path) only when that is graphql.Null.
var nonNullScalar = regexp.MustCompile(`(?m)^func \(ec \*executionContext\) ([^(\s]+)\(ctx context\.Context, sel ast\.SelectionSet, v [^)]+\) graphql\.Marshaler \{\n` +
	`\t_ = sel\n\tres := (.+)\n` +
	`\tif res == graphql\.Null \{\n\t\tif !graphql\.HasFieldError\(ctx, graphql\.GetFieldContext\(ctx\)\) \{\n` +
	`\t\t\tgraphql\.AddErrorf\(ctx, "the requested element is null which the schema does not allow"\)\n\t\t\}\n\t\}\n` +
	`\treturn res\n\}`)

// nullableScalar is a marshaller of a nullable scalar or enum, which reads nothing but v: $1 its
// name, $2 the expression.
var nullableScalar = regexp.MustCompile(`(?m)^func \(ec \*executionContext\) ([^(\s]+)\(ctx context\.Context, sel ast\.SelectionSet, v [^)]+\) graphql\.Marshaler \{\n` +
	`(?:\tif v == nil \{\n\t\treturn graphql\.Null\n\t\}\n)?` +
	`\t_ = sel\n\t_ = ctx\n\tres := (.+)\n\treturn res\n\}`)

// pureScalar is a marshaller's expression that inlineLeaves accepts: one of gqlgen's scalar
// marshallers or graph's MarshalDate, which neither panic nor read anything but their argument,
// of v, *v (behind the nil check of a nullable one), v as a string (an enum), or an enum's name
// looked up in the executor's map: $1 the call and the argument's head, $2 its tail.
var pureScalar = regexp.MustCompile(`^((?:graphql\.Marshal(?:String|Int|Int32|Int64|Boolean|ID|Time)|MarshalDate)\((?:string\(|\*|marshalN[^\s\[\]()]+\[)?)v(\)?\]?\))$`)

// leafType is graph's type that marshals a leaf where it lies in its struct (graph/leaves.go), by
// the head of the marshaller's expression that it writes as: a non-null one that never marshals
// as null.
var leafType = map[string]string{
	"graphql.MarshalString(":        "leafString",
	"graphql.MarshalString(string(": "leafString", // an enum: a string type
	"graphql.MarshalID(":            "leafString",
	"graphql.MarshalInt(":           "leafInt",
	"graphql.MarshalBoolean(":       "leafBool",
	"graphql.MarshalTime(":          "leafTime", // under leafWhen's condition
}

// leafWhen is the condition, on the struct's field, under which a leafType writes what gqlgen's
// marshaller writes: gqlgen's time is null when zero, which for a non-null field is an error
// that gqlgen's path adds.
var leafWhen = map[string]string{
	"leafTime": "!%s.IsZero()",
}

// inlineLeaves puts, at the head of every leafField whose marshaller is a nonNullScalar or (for
// a nullable field) a nullableScalar whose expression is a pureScalar, a path that marshals the
// struct's field directly when plainField holds: a leafType where there is one, else the
// marshaller's expression. A non-null leaf whose value marshals as null
// takes gqlgen's path after all, which adds the error at the field's own path. It returns the
// source and the number of leaves given the path.
func inlineLeaves(src []byte) ([]byte, int, error) {
	if bytes.Contains(src, []byte("out.AddField(")) {
		// object writes the fields CollectFields gave, which a FieldSet that grows would outgrow.
		return nil, 0, fmt.Errorf("an object's FieldSet grows (out.AddField): gqlgen generates otherwise now; see graph/objects.go")
	}
	nonNull, nullable := map[string][2]string{}, map[string]bool{}
	for _, m := range nonNullScalar.FindAllSubmatch(src, -1) {
		if p := pureScalar.FindSubmatch(m[2]); p != nil && !bytes.HasSuffix(p[1], []byte("*")) {
			nonNull[string(m[1])] = [2]string{string(p[1]), string(p[2])}
		}
	}
	for _, m := range nullableScalar.FindAllSubmatch(src, -1) {
		if pureScalar.Match(m[2]) {
			nullable[string(m[1])] = true
		}
	}
	n := 0
	src = leafField.ReplaceAllFunc(src, func(fn []byte) []byte {
		m := leafField.FindSubmatch(fn)
		head, field, marshal, required := string(m[1]), "obj."+string(m[2]), string(m[3]), string(m[4]) == "true"
		var fast string
		switch {
		case required && leafType[nonNull[marshal][0]] != "":
			typ, when := leafType[nonNull[marshal][0]], ""
			if c := leafWhen[typ]; c != "" {
				when = " && " + fmt.Sprintf(c, field)
			}
			fast = "\tif plainField(ec.OperationContext)" + when + " {\n\t\treturn (*" + typ + ")(&" + field + ")\n\t}\n"
		case required && nonNull[marshal][0] != "":
			expr := nonNull[marshal][0] + field + nonNull[marshal][1]
			fast = "\tif plainField(ec.OperationContext) {\n\t\tif res := " + expr + "; res != graphql.Null {\n\t\t\treturn res\n\t\t}\n\t}\n"
		case !required && nullable[marshal]:
			fast = "\tif plainField(ec.OperationContext) {\n\t\treturn ec." + marshal + "(ctx, field.Selections, " + field + ")\n\t}\n"
		default:
			return fn
		}
		n++
		return []byte(head + fast + string(fn[len(head):]))
	})
	out, err := format.Source(src)
	return out, n, err
}

// minFields is fewer than the fields inlineFields finds (about 230).
const minFields = 150

// resolvedField is a field function of gqlgen's that inlineLeaves left (a leaf's starts with its
// path), with no directive middleware: $1 its head, $2 its field context function, $3 the
// resolver's expression (after the field context's lookup, which a resolver that reads its
// arguments makes first), $4 the type of the value, $5 its marshaller, $6 whether a panic is
// recovered, $7 whether the field is non-null.
var resolvedField = regexp.MustCompile(`(?m)^(func \(ec \*executionContext\) _\w+\(ctx context\.Context, field graphql\.CollectedField(?:, obj \*[\w.]+)?\) \(ret graphql\.Marshaler\) \{\n)` +
	`\treturn graphql\.ResolveField\(\n\t\tctx,\n\t\tec\.OperationContext,\n\t\tfield,\n` +
	`\t\tfunc\(ctx context\.Context, field graphql\.CollectedField\) \(\*graphql\.FieldContext, error\) \{\n\t\t\treturn (ec\.fieldContext_\w+)\(ctx, field\)\n\t\t\},\n` +
	`\t\tfunc\(ctx context\.Context\) \(any, error\) \{\n(?:\t\t\tfc := graphql\.GetFieldContext\(ctx\)\n)?\t\t\treturn ([^\n]+)\n\t\t\},\n` +
	`\t\tnil,\n` +
	`\t\tfunc\(ctx context\.Context, selections ast\.SelectionSet, v ([^)\n]+)\) graphql\.Marshaler \{\n\t\t\treturn (ec\.[^(\s]+)\(ctx, selections, v\)\n\t\t\},\n` +
	`\t\t(true|false),\n\t\t(true|false),\n\t\)\n\}`)

// inlineFields puts, at the head of every other field function (resolvedField), a path that does
// what graphql.ResolveField does for it when plainField holds (the field middleware is gqlgen's
// pass-through) without the closures it is handed and calls, nor the value's boxing: the field
// context made and put in the context, the resolver called under it, a panic recovered as
// gqlgen's handler does, an error added at the field's path, a nil value (of an interface)
// reported as gqlgen reports it, and the value marshalled. A resolver that reads its arguments
// looks its field context up first; on the path it is the one just made. It returns the source
// and the number of fields given the path.
func inlineFields(src []byte) ([]byte, int, error) {
	n := 0
	src = resolvedField.ReplaceAllFunc(src, func(fn []byte) []byte {
		m := resolvedField.FindSubmatch(fn)
		head, fieldContext, resolve, typ, marshal := string(m[1]), string(m[2]), string(m[3]), string(m[4]), string(m[5])
		recovers, nonNull := string(m[6]) == "true", string(m[7]) == "true"
		var b strings.Builder
		b.WriteString("\tif plainField(ec.OperationContext) {\n")
		b.WriteString("\t\tfc, err := " + fieldContext + "(ctx, field)\n\t\tif err != nil {\n\t\t\treturn graphql.Null\n\t\t}\n")
		b.WriteString("\t\tctx = graphql.WithFieldContext(ctx, fc)\n")
		if recovers {
			b.WriteString("\t\tdefer func() {\n\t\t\tif r := recover(); r != nil {\n\t\t\t\tec.Error(ctx, ec.Recover(ctx, r))\n\t\t\t\tret = graphql.Null\n\t\t\t}\n\t\t}()\n")
		}
		b.WriteString("\t\tvar res " + typ + "\n\t\tres, err = " + resolve + "\n")
		b.WriteString("\t\tif err != nil {\n\t\t\tec.Error(ctx, graphql.AddFieldLocationToError(ctx, err))\n\t\t\treturn graphql.Null\n\t\t}\n")
		required := "!graphql.HasFieldError(ctx, fc)" // gqlgen: (nonNull || fc.NonNull) && that
		if !nonNull {
			required = "fc.NonNull && " + required
		}
		b.WriteString("\t\tif any(res) == nil {\n\t\t\tif " + required + " {\n\t\t\t\tec.Errorf(ctx, \"must not be null\")\n\t\t\t}\n\t\t\treturn graphql.Null\n\t\t}\n")
		b.WriteString("\t\tfc.Result = res\n\t\treturn " + marshal + "(ctx, field.Selections, res)\n\t}\n")
		n++
		return []byte(head + b.String() + string(fn[len(head):]))
	})
	out, err := format.Source(src)
	return out, n, err
}
