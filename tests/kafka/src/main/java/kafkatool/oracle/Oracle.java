package kafkatool.oracle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The live oracle's driver: Kafka's own admin client, producer and consumer, run against a broker on loopback.
 *
 * <pre>
 *   Oracle ready    BOOTSTRAP BROKERS TIMEOUT_MS          wait until the cluster shows BROKERS brokers
 *   Oracle topics   BOOTSTRAP RF [K=V,...]                create the workload's topics (replication factor RF,
 *                                                         extra topic configs for all)
 *   Oracle workload BOOTSTRAP SEED MAX_BYTES MAX_MS MIX   produce a seeded workload; one "ack" line per batch
 *   Oracle groups   BOOTSTRAP SEED PROTOCOLS              commit offsets for consumer groups (classic[,consumer])
 *   Oracle describe BOOTSTRAP [TOPIC-P,...]               the cluster's view of every partition (or of those
 *                                                         named), as JSON; a leaderless one has null offsets
 * </pre>
 * Everything is printed on stdout as JSON lines; diagnostics go to the slf4j log.
 */
public final class Oracle {
    private Oracle() {
    }

    /** The workload's topics: name, partitions and topic configs. */
    static final String[][] TOPICS = {
        {"plain", "2", ""},
        {"codec-gzip", "1", "compression.type=gzip"},
        {"codec-snappy", "1", "compression.type=snappy"},
        {"codec-lz4", "1", "compression.type=lz4"},
        {"codec-zstd", "1", "compression.type=zstd"},
        {"idem", "2", ""},
        {"txn", "3", ""},
        {"compact", "1", "cleanup.policy=compact,min.cleanable.dirty.ratio=0.01,delete.retention.ms=100,"
            + "min.compaction.lag.ms=0,segment.ms=1500"},
        {"retention", "1", "retention.bytes=1048576"},
    };

    public static void main(String[] args) throws Exception {
        String cmd = args[0];
        String bootstrap = args[1];
        switch (cmd) {
            case "ready" -> ready(bootstrap, Integer.parseInt(args[2]), Long.parseLong(args[3]));
            case "topics" -> topics(bootstrap, Short.parseShort(args[2]), args.length > 3 ? args[3] : "");
            case "workload" -> workload(bootstrap, Long.parseLong(args[2]), Long.parseLong(args[3]),
                Long.parseLong(args[4]), args.length > 5 ? args[5] : "all");
            case "groups" -> groups(bootstrap, Long.parseLong(args[2]), args[3]);
            case "describe" -> describe(bootstrap, args.length > 2 ? Set.of(args[2].split(",")) : Set.of());
            case "quorum" -> quorum(bootstrap);
            default -> throw new IllegalArgumentException("unknown command " + cmd);
        }
        System.out.flush();
        System.exit(0);
    }

    /** An admin client of the brokers, or of the controllers for a {@code controller:HOST:PORT} bootstrap. */
    static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put(bootstrap.startsWith("controller:") ? AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG
            : AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap.replaceFirst("^controller:", ""));
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        return Admin.create(p);
    }

    static void ready(String bootstrap, int brokers, long timeoutMs) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        try (Admin admin = admin(bootstrap)) {
            while (true) {
                try {
                    Collection<Node> nodes = admin.describeCluster().nodes().get(5, TimeUnit.SECONDS);
                    if (nodes.size() >= brokers) {
                        System.out.println("{\"ready\": true, \"brokers\": " + nodes.size() + "}");
                        return;
                    }
                } catch (Exception e) {
                    // not up yet
                }
                if (System.currentTimeMillis() > deadline) {
                    System.out.println("{\"ready\": false}");
                    System.exit(1);
                }
                Thread.sleep(200);
            }
        }
    }

    static void topics(String bootstrap, short rf, String extra) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            List<NewTopic> topics = new ArrayList<>();
            for (String[] t : TOPICS) {
                Map<String, String> configs = new HashMap<>();
                configs.put("segment.bytes", "1048576");
                if (rf > 1) {
                    configs.put("min.insync.replicas", "2");
                    configs.put("unclean.leader.election.enable", "true");
                }
                for (String kv : (extra + "," + t[2]).split(",")) {
                    if (!kv.isEmpty()) {
                        String[] parts = kv.split("=", 2);
                        configs.put(parts[0], parts[1]);
                    }
                }
                topics.add(new NewTopic(t[0], Integer.parseInt(t[1]), rf).configs(configs));
            }
            try {
                admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
            // wait until every partition has a leader
            long deadline = System.currentTimeMillis() + 60000;
            List<String> names = new ArrayList<>();
            for (String[] t : TOPICS) {
                names.add(t[0]);
            }
            while (true) {
                boolean ok = true;
                try {
                    for (TopicDescription d : admin.describeTopics(names).allTopicNames().get(10, TimeUnit.SECONDS)
                            .values()) {
                        for (TopicPartitionInfo p : d.partitions()) {
                            ok &= p.leader() != null && p.isr().size() >= rf;
                        }
                    }
                } catch (ExecutionException e) {
                    ok = false;
                }
                if (ok) {
                    break;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("topics have no leader after 60 s");
                }
                Thread.sleep(100);
            }
            System.out.println("{\"topics\": " + TOPICS.length + "}");
        }
    }

    static Properties producerProps(String bootstrap, boolean idempotent, String compression) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(idempotent));
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "16384");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "15000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        if (!idempotent) {
            p.put(ProducerConfig.RETRIES_CONFIG, "0");
        }
        return p;
    }

    /** Seeded text: compressible, with a little randomness. */
    static byte[] value(Random r, int size) {
        byte[] b = new byte[size];
        String words = "kafka offset epoch segment index producer sequence leader follower replica ";
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (r.nextInt(10) == 0 ? 'a' + r.nextInt(26) : words.charAt((i * 7 + size) % words.length()));
        }
        return b;
    }

    static final Object OUT = new Object();

    static void ack(String topic, int partition, long offset, String producer) {
        synchronized (OUT) {
            System.out.println("{\"ack\": \"" + topic + "-" + partition + "\", \"offset\": " + offset
                + ", \"producer\": \"" + producer + "\"}");
        }
    }

    /**
     * Produce until MAX_BYTES are acknowledged or MAX_MS have passed (or the process is killed). MIX is "all" or
     * a comma list of: plain, codecs, idem, txn, fence, compact, retention.
     */
    static void workload(String bootstrap, long seed, long maxBytes, long maxMs, String mix) throws Exception {
        Random r = new Random(seed);
        Set<String> kinds = new TreeSet<>(List.of(
            (mix.equals("all") ? "plain,codecs,idem,txn,fence,compact,retention" : mix).split(",")));
        long deadline = System.currentTimeMillis() + maxMs;
        AtomicLong acked = new AtomicLong();
        Map<String, KafkaProducer<byte[], byte[]>> plain = new LinkedHashMap<>();
        if (kinds.contains("plain")) {
            plain.put("plain", new KafkaProducer<>(producerProps(bootstrap, false, "none")));
        }
        if (kinds.contains("codecs")) {
            for (String c : List.of("gzip", "snappy", "lz4", "zstd")) {
                plain.put("codec-" + c, new KafkaProducer<>(producerProps(bootstrap, true, c)));
            }
        }
        if (kinds.contains("idem")) {
            plain.put("idem", new KafkaProducer<>(producerProps(bootstrap, true, "none")));
            plain.put("idem#2", new KafkaProducer<>(producerProps(bootstrap, true, "lz4")));
        }
        if (kinds.contains("compact")) {
            plain.put("compact", new KafkaProducer<>(producerProps(bootstrap, true, "none")));
        }
        if (kinds.contains("retention")) {
            plain.put("retention", new KafkaProducer<>(producerProps(bootstrap, false, "none")));
        }
        List<KafkaProducer<byte[], byte[]>> txns = new ArrayList<>();
        List<String> txnIds = new ArrayList<>();
        if (kinds.contains("txn")) {
            for (int i = 0; i < 3; i++) {
                txnIds.add("tx-" + seed % 1000 + "-" + i);
                txns.add(transactional(bootstrap, txnIds.get(i)));
            }
        }
        long round = 0;
        try {
            while (acked.get() < maxBytes && System.currentTimeMillis() < deadline) {
                round++;
                for (Map.Entry<String, KafkaProducer<byte[], byte[]>> e : plain.entrySet()) {
                    String topic = e.getKey().split("#")[0];
                    int partitions = topic.equals("plain") || topic.equals("idem") ? 2 : 1;
                    int n = 1 + r.nextInt(40);
                    for (int i = 0; i < n; i++) {
                        int size = 20 + r.nextInt(r.nextInt(8) == 0 ? 3000 : 400);
                        byte[] key = topic.equals("compact") ? ("k" + r.nextInt(60)).getBytes()
                            : (r.nextInt(4) == 0 ? null : ("key-" + r.nextInt(1000)).getBytes());
                        byte[] val = topic.equals("compact") && r.nextInt(8) == 0 ? null : value(r, size);
                        RecordHeaders headers = new RecordHeaders();
                        if (r.nextInt(5) == 0) {
                            headers.add("h" + r.nextInt(3), value(r, r.nextInt(12)));
                        }
                        int partition = r.nextInt(partitions);
                        String who = e.getKey();
                        e.getValue().send(new ProducerRecord<>(topic, partition, null, key, val, headers),
                            (md, ex) -> {
                                if (ex == null) {
                                    acked.addAndGet(size);
                                    ack(md.topic(), md.partition(), md.offset(), who);
                                }
                            });
                    }
                }
                for (int i = 0; i < txns.size(); i++) {
                    KafkaProducer<byte[], byte[]> p = txns.get(i);
                    try {
                        p.beginTransaction();
                        int n = 1 + r.nextInt(12);
                        List<long[]> sent = new ArrayList<>();
                        List<java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata>> fs =
                            new ArrayList<>();
                        for (int j = 0; j < n; j++) {
                            int size = 20 + r.nextInt(300);
                            fs.add(p.send(new ProducerRecord<>("txn", r.nextInt(3), null,
                                ("t" + i + "-" + round).getBytes(), value(r, size))));
                            acked.addAndGet(size);
                        }
                        if (r.nextInt(10) < 3) {
                            p.abortTransaction();
                        } else {
                            p.commitTransaction();
                            for (var f : fs) {
                                var md = f.get();
                                ack(md.topic(), md.partition(), md.offset(), txnIds.get(i));
                            }
                        }
                    } catch (Exception ex) {
                        // fenced or broker gone: start over with a fresh producer of the same id (this fences)
                        try {
                            p.close(Duration.ofMillis(100));
                        } catch (Exception ignored) {
                            // already broken
                        }
                        txns.set(i, transactional(bootstrap, txnIds.get(i)));
                    }
                    if (kinds.contains("fence") && r.nextInt(25) == 0) {
                        // a second producer with the same transactional.id: the old one is fenced
                        KafkaProducer<byte[], byte[]> fresh = transactional(bootstrap, txnIds.get(i));
                        try {
                            txns.get(i).close(Duration.ofMillis(100));
                        } catch (Exception ignored) {
                            // the fenced one
                        }
                        txns.set(i, fresh);
                    }
                }
                for (KafkaProducer<byte[], byte[]> p : plain.values()) {
                    p.flush();
                }
                if (r.nextInt(6) == 0) {
                    // leave one transaction open for a while (an open transaction at the kill)
                    if (!txns.isEmpty()) {
                        KafkaProducer<byte[], byte[]> p = txns.get(r.nextInt(txns.size()));
                        try {
                            p.beginTransaction();
                            p.send(new ProducerRecord<>("txn", r.nextInt(3), null, "open".getBytes(), value(r, 50)))
                                .get();
                            Thread.sleep(20 + r.nextInt(80));
                            p.commitTransaction();
                        } catch (Exception ignored) {
                            // the next round replaces it
                        }
                    }
                }
            }
        } finally {
            synchronized (OUT) {
                System.out.println("{\"done\": true, \"acked_bytes\": " + acked.get() + "}");
                System.out.flush();
            }
            for (KafkaProducer<byte[], byte[]> p : plain.values()) {
                p.close(Duration.ofSeconds(5));
            }
            for (KafkaProducer<byte[], byte[]> p : txns) {
                p.close(Duration.ofSeconds(5));
            }
        }
    }

    static KafkaProducer<byte[], byte[]> transactional(String bootstrap, String id) {
        Properties p = producerProps(bootstrap, true, "none");
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000");
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p);
        producer.initTransactions();
        return producer;
    }

    /** Commit offsets for consumer groups, one per protocol, each a member that subscribes and polls. */
    static void groups(String bootstrap, long seed, String protocols) throws Exception {
        Random r = new Random(seed);
        for (String protocol : protocols.split(",")) {
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, "group-" + protocol);
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            if (!protocol.equals("classic")) {
                p.put("group.protocol", protocol);
            }
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
                c.subscribe(List.of("plain", "idem"));
                long deadline = System.currentTimeMillis() + 20000;
                int commits = 0;
                while (System.currentTimeMillis() < deadline && commits < 3) {
                    var records = c.poll(Duration.ofMillis(500));
                    if (records.isEmpty()) {
                        continue;
                    }
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (TopicPartition tp : records.partitions()) {
                        var list = records.records(tp);
                        long off = list.get(r.nextInt(list.size())).offset() + 1;
                        offsets.put(tp, new OffsetAndMetadata(off, "m" + commits));
                    }
                    c.commitSync(offsets);
                    commits++;
                }
                System.out.println("{\"group\": \"group-" + protocol + "\", \"commits\": " + commits + "}");
            }
        }
    }

    static String str(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                b.append('\\').append(ch);
            } else if (ch < 0x20) {
                b.append(String.format("\\u%04x", (int) ch));
            } else {
                b.append(ch);
            }
        }
        return b.append('"').toString();
    }

    static String opt(OptionalLong v) {
        return v.isPresent() ? Long.toString(v.getAsLong()) : "null";
    }

    static String opt(OptionalInt v) {
        return v.isPresent() ? Integer.toString(v.getAsInt()) : "null";
    }

    static String opt(Optional<Integer> v) {
        return v.isPresent() ? Integer.toString(v.get()) : "null";
    }

    /** Every partition of every topic as the cluster reports it: one JSON object on one line. */
    static void describe(String bootstrap, Set<String> only) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            Set<String> names = admin.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions()
                .listInternal(true)).names().get(20, TimeUnit.SECONDS);
            Map<String, TopicDescription> topics = new TreeMap<>(
                admin.describeTopics(names).allTopicNames().get(20, TimeUnit.SECONDS));
            List<TopicPartition> tps = new ArrayList<>();
            StringBuilder out = new StringBuilder("{\"partitions\": {");
            Map<TopicPartition, TopicPartitionInfo> info = new LinkedHashMap<>();
            for (TopicDescription d : topics.values()) {
                for (TopicPartitionInfo p : d.partitions()) {
                    TopicPartition tp = new TopicPartition(d.name(), p.partition());
                    if (!only.isEmpty() && !only.contains(tp.topic() + "-" + tp.partition())) {
                        continue;
                    }
                    tps.add(tp);
                    info.put(tp, p);
                }
            }
            // A leaderless partition has nobody to answer: it is not asked (its offsets and producers are null).
            List<TopicPartition> led = new ArrayList<>();
            for (TopicPartition tp : tps) {
                if (info.get(tp).leader() != null) {
                    led.add(tp);
                }
            }
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> earliest = offsets(admin, led,
                OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED);
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> latest = offsets(admin, led,
                OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED);
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> stable = offsets(admin, led,
                OffsetSpec.latest(), IsolationLevel.READ_COMMITTED);
            Map<TopicPartition, String> producers = new HashMap<>();
            DescribeProducersResult dp = admin.describeProducers(led);
            for (TopicPartition tp : tps) {
                if (!led.contains(tp)) {
                    producers.put(tp, "null");
                    continue;
                }
                StringBuilder b = new StringBuilder("[");
                try {
                    List<ProducerState> states = new ArrayList<>(
                        dp.partitionResult(tp).get(20, TimeUnit.SECONDS).activeProducers());
                    states.sort((a, c) -> Long.compare(a.producerId(), c.producerId()));
                    for (ProducerState s : states) {
                        if (b.length() > 1) {
                            b.append(", ");
                        }
                        b.append("{\"producer_id\": ").append(s.producerId())
                            .append(", \"producer_epoch\": ").append(s.producerEpoch())
                            .append(", \"last_sequence\": ").append(s.lastSequence())
                            .append(", \"last_timestamp\": ").append(s.lastTimestamp())
                            .append(", \"coordinator_epoch\": ").append(opt(s.coordinatorEpoch()))
                            .append(", \"current_txn_start_offset\": ").append(opt(s.currentTransactionStartOffset()))
                            .append("}");
                    }
                    producers.put(tp, b.append("]").toString());
                } catch (ExecutionException e) {
                    producers.put(tp, str("error: " + e.getCause()));
                } catch (java.util.concurrent.TimeoutException e) {
                    producers.put(tp, str("error: timed out"));
                }
            }
            Map<TopicPartition, String> sizes = new HashMap<>();
            Collection<Integer> brokerIds = new ArrayList<>();
            for (Node n : admin.describeCluster().nodes().get(20, TimeUnit.SECONDS)) {
                brokerIds.add(n.id());
            }
            Map<Integer, Map<String, LogDirDescription>> dirs = admin.describeLogDirs(brokerIds).allDescriptions()
                .get(20, TimeUnit.SECONDS);
            for (var byBroker : dirs.entrySet()) {
                for (LogDirDescription d : byBroker.getValue().values()) {
                    for (Map.Entry<TopicPartition, ReplicaInfo> ri : d.replicaInfos().entrySet()) {
                        sizes.merge(ri.getKey(), "\"" + byBroker.getKey() + "\": {\"size\": " + ri.getValue().size()
                            + ", \"offset_lag\": " + ri.getValue().offsetLag() + "}", (a, c) -> a + ", " + c);
                    }
                }
            }
            boolean first = true;
            for (TopicPartition tp : tps) {
                TopicPartitionInfo p = info.get(tp);
                if (!first) {
                    out.append(", ");
                }
                first = false;
                List<Integer> isr = new ArrayList<>();
                for (Node n : p.isr()) {
                    isr.add(n.id());
                }
                List<Integer> replicas = new ArrayList<>();
                for (Node n : p.replicas()) {
                    replicas.add(n.id());
                }
                out.append(str(tp.topic() + "-" + tp.partition())).append(": {")
                    .append("\"leader\": ").append(p.leader() == null ? "null" : Integer.toString(p.leader().id()))
                    .append(", \"replicas\": ").append(replicas)
                    .append(", \"isr\": ").append(isr)
                    .append(", \"log_start_offset\": ").append(off(earliest.get(tp)))
                    .append(", \"high_watermark\": ").append(off(latest.get(tp)))
                    .append(", \"leader_epoch\": ").append(epoch(latest.get(tp)))
                    .append(", \"last_stable_offset\": ").append(off(stable.get(tp)))
                    .append(", \"producers\": ").append(producers.get(tp))
                    .append(", \"replica_sizes\": {").append(sizes.getOrDefault(tp, "")).append("}")
                    .append("}");
            }
            out.append("}, \"transactions\": [");
            Collection<TransactionListing> listings = admin.listTransactions().all().get(20, TimeUnit.SECONDS);
            List<String> ids = new ArrayList<>();
            for (TransactionListing l : listings) {
                ids.add(l.transactionalId());
            }
            ids.sort(String::compareTo);
            Map<String, TransactionDescription> described = ids.isEmpty() ? Map.of()
                : admin.describeTransactions(ids).all().get(20, TimeUnit.SECONDS);
            first = true;
            for (String id : ids) {
                TransactionDescription d = described.get(id);
                if (!first) {
                    out.append(", ");
                }
                first = false;
                List<String> parts = new ArrayList<>();
                for (TopicPartition tp : d.topicPartitions()) {
                    parts.add(str(tp.topic() + "-" + tp.partition()));
                }
                parts.sort(String::compareTo);
                out.append("{\"transactional_id\": ").append(str(id))
                    .append(", \"state\": ").append(str(d.state().toString()))
                    .append(", \"producer_id\": ").append(d.producerId())
                    .append(", \"producer_epoch\": ").append(d.producerEpoch())
                    .append(", \"timeout_ms\": ").append(d.transactionTimeoutMs())
                    .append(", \"start_time_ms\": ").append(opt(d.transactionStartTimeMs()))
                    .append(", \"partitions\": ").append(parts)
                    .append("}");
            }
            out.append("]}");
            System.out.println(out);
        }
    }

    static String off(ListOffsetsResult.ListOffsetsResultInfo i) {
        return i == null ? "null" : Long.toString(i.offset());
    }

    static String epoch(ListOffsetsResult.ListOffsetsResultInfo i) {
        return i == null ? "null" : opt(i.leaderEpoch());
    }

    static Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> offsets(Admin admin,
            List<TopicPartition> tps, OffsetSpec spec, IsolationLevel level) throws Exception {
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        for (TopicPartition tp : tps) {
            req.put(tp, spec);
        }
        ListOffsetsResult res = admin.listOffsets(req, new ListOffsetsOptions(level));
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> out = new HashMap<>();
        for (TopicPartition tp : tps) {
            try {
                out.put(tp, res.partitionResult(tp).get(20, TimeUnit.SECONDS));
            } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
                // leaderless partition: no answer
            }
        }
        return out;
    }

    /** DescribeMetadataQuorum as one JSON line: leader, epoch, high watermark, voters and observers. */
    static void quorum(String bootstrap) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            org.apache.kafka.clients.admin.QuorumInfo q =
                admin.describeMetadataQuorum().quorumInfo().get(30, TimeUnit.SECONDS);
            StringBuilder b = new StringBuilder("{\"leader_id\": ").append(q.leaderId())
                .append(", \"leader_epoch\": ").append(q.leaderEpoch())
                .append(", \"high_watermark\": ").append(q.highWatermark())
                .append(", \"voters\": ").append(replicas(q.voters()))
                .append(", \"observers\": ").append(replicas(q.observers()))
                .append("}");
            System.out.println(b);
        }
    }

    static String replicas(List<org.apache.kafka.clients.admin.QuorumInfo.ReplicaState> states) {
        List<org.apache.kafka.clients.admin.QuorumInfo.ReplicaState> sorted = new ArrayList<>(states);
        sorted.sort((a, c) -> Integer.compare(a.replicaId(), c.replicaId()));
        StringBuilder b = new StringBuilder("[");
        for (org.apache.kafka.clients.admin.QuorumInfo.ReplicaState s : sorted) {
            if (b.length() > 1) {
                b.append(", ");
            }
            b.append("{\"replica_id\": ").append(s.replicaId())
                .append(", \"directory_id\": ").append(str(s.replicaDirectoryId().toString()))
                .append(", \"log_end_offset\": ").append(s.logEndOffset()).append("}");
        }
        return b.append("]").toString();
    }
}
