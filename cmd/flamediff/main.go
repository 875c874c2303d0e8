// Command flamediff creates the schema, ingests, lists, exports and deletes
// runs, removes what no reader can see, records source changes, seeds a
// demo data set and runs the tree engine on local files or stored runs
// (docs/CLI.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"

	"github.com/flamediff/flamediff/pkg/storage"
)

// command is one sub-command: its flags are registered on fs by setup, and
// run executes it with the remaining arguments. synopsis is its command
// line, positional arguments included, for -h.
type command struct {
	summary, synopsis string
	setup             func(fs *flag.FlagSet) func(ctx context.Context, args []string, out io.Writer) error
}

var commands = map[string]command{
	"migrate": {"create or upgrade the ClickHouse schema", "--dsn DSN", migrateCmd},
	"ingest": {"store runs' profiles",
		"--dsn DSN --app APP --build BUILD --run RUN [flags] FILE\n       flamediff ingest --dsn DSN --app APP --build BUILD [flags] FILE|DIR...\n" +
			"       flamediff ingest --dsn DSN --format otlp|otlp-traces [flags] FILE", ingestCmd},
	"export": {"print a stored run or build as folded stacks or JSON",
		"--dsn DSN --app APP --build BUILD [--run RUN] [--output folded|json]", exportCmd},
	"apps":   {"list the apps that have runs", "--dsn DSN", appsCmd},
	"builds": {"list an app's builds", "--dsn DSN --app APP", buildsCmd},
	"runs":   {"list an app's runs", "--dsn DSN --app APP [--build BUILD]...", runsCmd},
	"delete": {"delete a run", "--dsn DSN --app APP --build BUILD --run RUN", deleteCmd},
	"gc":     {"remove rows no reader can see", "--dsn DSN [--grace DURATION]", gcCmd},
	"bisect": {"find the commit that made a regression between a good and a bad revision",
		"--good REV --bad REV --build CMD --bench CMD [--max-runs N] [--out DIR] [flags]", bisectCmd},
	"changes": {"record a build's source changes",
		"--dsn DSN --app APP --build BUILD CHANGES.json|-\n       flamediff changes --git-diff A..B [--repo DIR] [--dsn DSN --app APP --build BUILD]", changesCmd},
	"query": {"run the tree engine on profile files or stored runs; gate CI on regressions",
		"--type TYPE --head FILE... [--base FILE...] [flags]\n       flamediff query --dsn DSN --model JSON [flags]", queryCmd},
	"seed": {"load a realistic demo data set, or a directory of builds of profile files",
		"--dsn DSN [--seed N]\n       flamediff seed --dsn DSN [--app APP] [--format F] [--sample-type TYPE] DIR", seedCmd},
	"report": {"write a diff or flame graph as one self-contained HTML file",
		"--type diff|flamegraph --head FILE... [--base FILE...] -o FILE\n       flamediff report --dsn DSN --model JSON -o FILE", reportCmd},
	"serve": {"serve a local web UI over stored runs", "--dsn DSN [--addr 127.0.0.1:3001]", serveCmd},
	"mcp":   {"serve read-only MCP tools to an AI assistant over stdin and stdout", "--dsn DSN", mcpCmd},
	"receive": {"receive OpenTelemetry traces and profiles over OTLP/HTTP",
		"--dsn DSN [--addr 127.0.0.1:4318] [--wait 10s] [flags]", receiveCmd},
}

// usageError marks a mistake in the command line (exit code 2).
type usageError struct{ error }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM) // docker stop, systemd and Kubernetes send SIGTERM
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	var look lookError
	switch {
	case err == nil:
	case errors.As(err, new(usageError)):
		fmt.Fprintln(os.Stderr, "flamediff:", err)
		os.Exit(2)
	case errors.As(err, new(regressionError)):
		fmt.Fprintln(os.Stderr, "flamediff:", err)
		os.Exit(3)
	case errors.As(err, &look):
		fmt.Fprintln(os.Stderr, "flamediff:", err)
		os.Exit(look.code)
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
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		_, err := fmt.Fprintln(out, "flamediff", version())
		return err
	}
	cmd, ok := commands[args[0]]
	if !ok {
		usage(errOut)
		return usageError{fmt.Errorf("unknown command %q", args[0])}
	}
	fs := flag.NewFlagSet("flamediff "+args[0], flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Usage = func() {
		fmt.Fprintf(errOut, "usage: flamediff %s %s\n\n%s.\n\nflags:\n", args[0], cmd.synopsis, cmd.summary)
		fs.PrintDefaults()
	}
	exec := cmd.setup(fs)
	if err := fs.Parse(interleaved(fs, args[1:])); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	err := exec(ctx, fs.Args(), out)
	if storage.NoDatabase(err) {
		return fmt.Errorf("%w (the database does not exist on that server: run `flamediff migrate` first)", err)
	}
	return err
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: flamediff COMMAND [flags] [args]\n       flamediff --version\n\ncommands:")
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

// version is the module version and VCS revision the binary was built
// from, as the go command records them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		v += " " + rev[:min(12, len(rev))]
		if settings["vcs.modified"] == "true" {
			v += "+dirty"
		}
	}
	return v + " " + info.GoVersion
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
