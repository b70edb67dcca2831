"""The analysis layer: the compositions of engines that ``report``, ``scan`` and several commands share.

Between ``engine`` and ``render``: it may read inputs (``reading``) and run the pure engines, and it returns
plain documents and rows; it never writes files and never renders. A command parses its options, calls one
analysis and hands the result to a renderer, so no command needs another command's module.

- ``findings``: check's finding rows, their order, severity floors and ``expect.json`` comparisons;
- ``replay``: the replay-producers document (``ProducerStateManager``'s state after a replay);
- ``restart``: the simulate-restart document and the log dir a load leaves (``LogLoader``);
- ``groups`` / ``transactions``: the offsets-topic and transaction-log joins;
- ``replica_sets``: real replicas loaded as after restart, then divergence and elections;
- ``replication``: the scenario run's document and timeline;
- ``metadata``: the KRaft metadata log loaded and replayed into the image;
- ``report``: the incident report's document, and ``verdict``: its marks and judgement.
"""
