"""kafkatool: a forensic toolkit for Apache Kafka broker data directories."""

__version__ = "0.1.0"
