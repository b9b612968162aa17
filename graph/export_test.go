package graph

// PlainField is plainField, for the tests of package graph_test.
var PlainField = plainField
