"""Reproductions of the papers' results, one module per paper.

* :mod:`mobiflow.repro.afc`: the AFC paper (S. Sanadhya, R. Sivakumar, "Adaptive Flow
  Control for TCP on Mobile Phones", IEEE INFOCOM 2011; ``python -m mobiflow.repro.afc``).
* :mod:`mobiflow.repro.fld`: FLD_TCP, flow-length dependent congestion control
  (G. R. Moktan, "In the Interest of the Short: An approach for e2e congestion control",
  talk slides, Aalto University, 2012; ``python -m mobiflow.repro.fld``).
"""
