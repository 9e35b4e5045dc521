"""Reproductions of the papers' results, one module per paper, on one framework.

* :mod:`mobiflow.repro.framework`: what every reproduction shares (its declaration,
  options and command line, runs on :class:`mobiflow.Scenario`, the structured report).
* :mod:`mobiflow.repro.afc`: AFC (S. Sanadhya, R. Sivakumar, "Adaptive Flow Control for
  TCP on Mobile Phones", IEEE INFOCOM 2011).
* :mod:`mobiflow.repro.rsfc`: RSFC (Y. Xu, W. K. Leong, B. Leong, A. Razeen, "Dynamic
  regulation of mobile 3G/HSPA uplink buffer with receiver-side flow control", IEEE
  ICNP 2012).
* :mod:`mobiflow.repro.handoff`: IETT, BA-SST and Freeze-TCP across vertical handoffs
  (Tsukamoto, Fukuda, Hori, Oie, "New flow control schemes of TCP for multimodal
  mobile hosts").
* :mod:`mobiflow.repro.freeze_dccp`: TFRC under disconnection and Freeze-DCCP (Mehani,
  Boreli, Ernst, ACM MobiArch 2009).
* :mod:`mobiflow.repro.fld`: FLD_TCP, flow-length dependent congestion control
  (G. R. Moktan, "In the Interest of the Short: An approach for e2e congestion control",
  talk slides, Aalto University, 2012).
* :mod:`mobiflow.repro.claims`: each paper's headline claims judged from the runs.
* :mod:`mobiflow.repro.report`: ``mobiflow reproduce``, the joint report.

Each runs with ``mobiflow reproduce NAME`` or ``python -m mobiflow.repro.MODULE``; see
``docs/architecture.md``, "How to add a reproduction".
"""
