"""Measured data (stand or flight records): import, channel map, alignment, metrics (Qt-free), and calibration.

The app and `dockmnemo validate` call `compare_run(run, measured, map)`: a `Comparison` with the run's and the aligned
measured channels on the run's time grid and a metrics table. docs/measured-data.md describes files and maps."""
from solver.measured.channel_map import (AlignSpec, ChannelMap, MappedChannel, MeasuredSignals, Sensor, convert,
                                         load_map, unit_factor)
from solver.measured.compare import (ChannelMetrics, Comparison, compare_arrays, compare_run, find_offset,
                                     first_crossing, load_measured, metrics_of)
from solver.measured.record import MeasuredError, MeasuredRecord, read_record

__all__ = ["AlignSpec", "ChannelMap", "ChannelMetrics", "Comparison", "MappedChannel", "MeasuredError",
           "MeasuredRecord", "MeasuredSignals", "Sensor", "compare_arrays", "compare_run", "convert", "find_offset",
           "first_crossing", "load_map", "load_measured", "metrics_of", "read_record", "unit_factor"]
