"""Reproductions of the seed documents' results, one module per seed.

* :mod:`mobiflow.repro.afc`: seed 000, Adaptive Flow Control for TCP on mobile phones
  (``python -m mobiflow.repro.afc``).
* :mod:`mobiflow.repro.fld`: seed 004, flow-length dependent congestion control
  (``python -m mobiflow.repro.fld``).
"""
