"""bspkit analysis: run bspprobe, fit BSP parameters, write reports, compare runs.

Modules:
  rawdata          read and check the raw-sample JSON lines that bspprobe writes (docs/probe-format.md)
  params           the parameter file as dataclasses: Params, Surface, Level, PredictModel
  fit              raw samples -> Params (thesis eq. 2.5/2.6 and 3.1-3.6, App. B.1)
  predict          predicted times: one h-relation (eq. 2.5/2.6, per h) and a whole driver run
  calibrate        the short calibration: its records, the drift since a probe, the parameters scaled by it
  algorithms       one record per algorithm (REGISTRY: driver, cost model, sweep); running a driver
  validate         the validation sweep: its runs, their predictions and summary
  validate_report  validate.json and the validate page
  imh_predict      the IMH model's predictions of cannon and oocmm runs
  profile          a profiled run's BSP cost and its prediction; profile_report its text, JSON and page
  report           the self-contained HTML report of one run (one function per section), the comparison
  plots            the matplotlib figures of the reports (Agg backend, embedded as PNG)
  probe            build bspkit and run bspprobe
  cluster          the emulated cluster: network namespaces with shaped links
  inputs           what the commands start from: run directories, raw and parameter files, the build
  fileformat       the format and version stamp of every JSON file, and the message for another format
  console          progress lines, the two kinds of error, writing output files
  cli              the `bspkit` command: builds the parser from bspkit.commands and dispatches
  commands         one module per subcommand: its subparser, its typed options, its run (argparse
                   is read there and in cli only)
  version          the one version of bspkit (CMake and the package read it there)
  programs         where bsprun, bspprobe and the drivers are (build tree or installed)
  api              for notebooks: load_run, load_params, predict_supersteps, plot_g_surface,
                   plot_prediction (re-exported here, imported on first use)
"""

from typing import Any

from bspkit.version import __version__

# bspkit.api's names, imported on first use: `import bspkit` (and `bspkit --help`) must not
# import numpy, scipy or matplotlib
_API = (
    "MODELS",
    "Run",
    "SuperstepPrediction",
    "load_params",
    "load_run",
    "plot_g_surface",
    "plot_prediction",
    "predict_supersteps",
)


def __getattr__(name: str) -> Any:
    if name in _API:
        from bspkit import api

        return getattr(api, name)
    raise AttributeError(f"module 'bspkit' has no attribute {name!r}")


__all__ = ["__version__", *_API]


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
