"""kafkatool: a forensic toolkit for Apache Kafka broker data directories.

Its layers, the path of one batch from bytes to each output, the native core (``kafkatool/_core``) and what it does
with broken or hostile input are described in the kafkatool(7) man page (``man/kafkatool.7``; ``man 7 kafkatool``
after a wheel install); the commands in kafkatool(1) and the README.
"""

__version__ = "0.1.0"
