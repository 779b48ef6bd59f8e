"""Calls an experiment driver's ``main`` in the test's own process (a subprocess would import
torch again) and returns its exit status, argparse's exits included."""


def exit_status(main, *args) -> int:
    try:
        return main(list(args))
    except SystemExit as exit:  # argparse's errors
        return exit.code
