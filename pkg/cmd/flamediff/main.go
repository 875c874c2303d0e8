// Command flamediff creates the schema, ingests profiles, exports runs,
// records source changes, seeds a demo data set and runs the tree engine on
// local files (SPEC §3).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
)

// command is one sub-command: its flags are registered on fs by setup, and
// run executes it with the remaining arguments.
type command struct {
	summary string
	setup   func(fs *flag.FlagSet) func(ctx context.Context, args []string, out io.Writer) error
}

var commands = map[string]command{
	"migrate": {"create or upgrade the ClickHouse schema", migrateCmd},
	"ingest":  {"store one run's profile", ingestCmd},
	"export":  {"print a stored run or build as folded stacks or JSON", exportCmd},
	"changes": {"record a build's source changes", changesCmd},
	"query":   {"run the tree engine on local profile files", queryCmd},
	"seed":    {"load a realistic demo data set", seedCmd},
}

// usageError marks a mistake in the command line (exit code 2).
type usageError struct{ error }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.As(err, new(usageError)):
		fmt.Fprintln(os.Stderr, "flamediff:", err)
		os.Exit(2)
	case errors.As(err, new(regressionError)):
		fmt.Fprintln(os.Stderr, "flamediff:", err)
		os.Exit(3)
	default:
		fmt.Fprintln(os.Stderr, "flamediff:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out, errOut io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(errOut)
		if len(args) == 0 {
			return usageError{errors.New("no command given")}
		}
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		usage(errOut)
		return usageError{fmt.Errorf("unknown command %q", args[0])}
	}
	fs := flag.NewFlagSet("flamediff "+args[0], flag.ContinueOnError)
	fs.SetOutput(errOut)
	exec := cmd.setup(fs)
	if err := fs.Parse(interleaved(fs, args[1:])); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	return exec(ctx, fs.Args(), out)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: flamediff COMMAND [flags] [args]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'flamediff COMMAND -h' for a command's flags.")
}

// interleaved moves flags that follow positional arguments in front of them,
// so that `flamediff ingest FILE --app x` works like `--app x FILE`.
func interleaved(fs *flag.FlagSet, args []string) []string {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil || isBool(f) || i+1 >= len(args) {
			continue
		}
		flags = append(flags, args[i+1])
		i++
		// A files flag takes every following value up to the next flag:
		// `--head a.pb b.pb` means `--head a.pb --head b.pb`.
		if _, ok := f.Value.(*filesFlag); ok {
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				flags = append(flags, a, args[i+1])
				i++
			}
		}
	}
	return append(flags, positional...)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// filesFlag is a repeatable flag that also takes a list of values.
type filesFlag struct{ listFlag }
