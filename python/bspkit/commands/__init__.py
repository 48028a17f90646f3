"""The `bspkit` subcommands, one module each: argparse stays here and in bspkit.cli, the
domain modules (fit, predict, validate, calibrate, profile, imh, cluster, the reports) take
typed arguments.

Each command module has:
  NAME              the subcommand's name
  PASS_THROUGH      whether what follows `--` goes on to the program it runs (else it is empty)
  add_parser(subparsers)   builds its subparser
  options_from(args)       the parsed arguments as its frozen options dataclass: the one place
                           an argparse.Namespace is read
  run(options, extra)      does the command, returns the exit status; errors are
                           console.Failure (exit 1) or console.UsageError (exit 2)
_args holds what several parsers share (argument types, the launch options), _fitted what
the commands that fit print and write.

The command modules import at their top only what does not load numpy: the standard library,
console, _args, and the domain modules that are standard library only (algorithms, probe,
programs, cluster, version). The others (numpy, scipy, matplotlib) are imported in the
functions that use them, types under TYPE_CHECKING, so that `bspkit --help` and the parser's
usage errors stay quick and run without numpy: the man pages are made from --help at build
time by the system python3 (tests/python/test_commands_layer.py checks both).
"""
