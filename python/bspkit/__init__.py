"""bspkit analysis: run bspprobe, fit BSP parameters, write reports, compare runs.

Modules:
  rawdata  read and check the raw-sample JSON lines that bspprobe writes (docs/probe-format.md)
  fit      raw samples -> parameter file (thesis eq. 2.5/2.6 and 3.1-3.6, App. B.1)
  report   the self-contained HTML report of one run, and the comparison of several
  plots    the matplotlib figures of the report (Agg backend, embedded as PNG)
  probe    build and run bspprobe
  synth    synthetic raw data from known parameters (tests, demonstrations)
  cli      the `bspkit` command
"""

__version__ = "0.1.0"
