"""The batch-boundary test: where a magic 2 record batch may be trusted to start.

Kafka itself never searches for a batch (``FileLogInputStream.nextBatch`` trusts the sizes it reads, and
recovery truncates at the first bad one); this tool resynchronises past damage and cuts segments into scan
ranges, and both need the same answer to "does a batch start here?": a header ``DefaultRecordBatch`` would
accept (magic 2, known codec and attribute bits, a length that fits, a record count its last offset delta
covers), the next :data:`RESYNC_CONFIRM` headers chaining with rising last offsets (or the data ending
exactly), then the candidate's CRC.

Where it is defined: the resilient walker (``schema.log_segment``) resynchronises with it, and ``schema`` sits
below ``storage`` (it may not import this module), so the one definition lives beside the walker and this
module is its name in storage. Nothing else defines a boundary test: ``reading.batch_scan.confirmed_boundary``
(the fleet scan's split points) calls it.
"""

from kafkatool.schema.log_segment import (
    MAX_PLAUSIBLE_BATCH,
    RESYNC_CONFIRM,
    confirmed_batch_start,
    plausible_batch_header,
)

__all__ = ["MAX_PLAUSIBLE_BATCH", "RESYNC_CONFIRM", "confirmed_batch_start", "plausible_batch_header"]
