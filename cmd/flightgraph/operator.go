package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/app"
)

// operatorCmd is `flightgraph operator add --email E --name N`, with the password on the first
// line of stdin, so that it never shows in the process list or the shell's history.
func operatorCmd(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "add" {
		return fmt.Errorf("usage: flightgraph operator add --email E --name N  (password on stdin)")
	}
	fs := flag.NewFlagSet("operator add", flag.ContinueOnError)
	c := flags(fs)
	email := fs.String("email", "", "the operator's e-mail address")
	name := fs.String("name", "", "the operator's name")
	if err := parse(fs, args[1:], getenv, stderr); err != nil {
		return err
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return fmt.Errorf("read the password from stdin: %w", err)
	}
	in := flightgraph.SignUpInput{Email: *email, Name: *name, Password: strings.TrimRight(line, "\r\n")}
	if err := in.Validate(); err != nil {
		return err
	}
	db, err := c.open(ctx, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	svc := app.New(app.Config{Stores: app.StoresOf(db), Now: db.Now})
	acc, err := svc.Access.CreateAccount(ctx, in, flightgraph.RoleOperator, "cli")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "operator %s <%s> added (%s)\n", acc.Name, acc.Email, acc.ID)
	return nil
}
