"""Work units, the one results store and the one run driver, shared by ``train`` and ``report``.

Why a package of its own: training sweeps (``train``) and the reproduction report
(``report``) both run many independent pieces of work and record them in SQLite. Both need
the same store and the same driver, and ``report`` imports ``train`` — so their common home
must sit below both. ``runs`` imports nothing of ours but ``checks``: it knows units,
processes, Ray and SQLite, never what a unit computes.

* :mod:`.version` — ``code_version()``: package version + hash of the source tree;
  ``build_info()`` (version, git commit, code version) and ``machine_info()``.
* :mod:`.store` — :class:`Store`: one SQLite file with tables per kind (training ``runs`` and
  their per-length ``results``, report ``claims``, work ``units``), schema migrations, and the
  rule that one store holds results of one code version; ``train.ResultStore`` is this class.
* :mod:`.driver` — :func:`run_units`: a list of :class:`Unit` → local process pool | Ray tasks,
  per-unit timeout on both, results handed to the driver process as they finish.
* :mod:`.procs` — children that die with their parent.
* :mod:`.tables` — the store as flat records, CSV, JSON; :func:`to_pandas` (the ``pandas`` extra).
* :mod:`.sinks` — where a training run also logs its numbers: TensorBoard, Weights & Biases.
"""

from .driver import BACKENDS, Outcome, Unit, check_address, report_progress, run_units
from .store import Store, VersionMismatch
from .tables import records, to_pandas
from .version import build_info, code_version, machine_info

__all__ = ["BACKENDS", "Outcome", "Store", "Unit", "VersionMismatch", "build_info", "check_address", "code_version",
           "machine_info", "records", "report_progress", "run_units", "to_pandas"]
