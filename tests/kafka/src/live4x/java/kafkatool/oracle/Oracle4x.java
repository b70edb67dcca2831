package kafkatool.oracle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/**
 * The live oracle's 4.x-only driver (issue 22 item 5): share groups (KIP-932, Kafka's {@code KafkaShareConsumer}),
 * streams groups (KIP-1071, a Kafka Streams app with {@code group.protocol=streams}) and the admin client's view of
 * groups and of the KRaft quorum. It is compiled by {@code tests/kafka/live4x.py} against the 4.4 clients and
 * kafka-streams only (Oracle.java is compiled for every version, 3.9 included, whose clients lack these APIs).
 *
 * <pre>
 *   Oracle4x share   BOOTSTRAP GROUP TOPIC RECORDS      produce RECORDS, then one share consumer acknowledges them
 *                                                      (accept, release, reject in turn) and commits
 *   Oracle4x streams BOOTSTRAP APP_ID IN OUT RECORDS    produce RECORDS to IN, run a streams app (count by key
 *                                                      into an in-memory store, to OUT) until it has committed
 *   Oracle4x groups  BOOTSTRAP                         every group (ListGroups), each share/streams/consumer group
 *                                                      described, with its committed offsets, as one JSON line
 *   Oracle4x quorum  BOOTSTRAP                         DescribeMetadataQuorum as one JSON line
 * </pre>
 */
public final class Oracle4x {
    private Oracle4x() {
    }

    public static void main(String[] args) throws Exception {
        String cmd = args[0];
        String bootstrap = args[1];
        switch (cmd) {
            case "share" -> share(bootstrap, args[2], args[3], Integer.parseInt(args[4]));
            case "streams" -> streams(bootstrap, args[2], args[3], args[4], Integer.parseInt(args[5]));
            case "groups" -> groups(bootstrap);
            case "quorum" -> Oracle.quorum(bootstrap);
            default -> throw new IllegalArgumentException("unknown command " + cmd);
        }
        System.out.flush();
        System.exit(0);
    }

    static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put(bootstrap.startsWith("controller:") ? AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG
            : AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap.replaceFirst("^controller:", ""));
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return Admin.create(p);
    }

    static void createTopic(Admin admin, String name, int partitions) throws Exception {
        try {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
    }

    static void produce(String bootstrap, String topic, int records) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + (i % 5), "v" + i)).get(30, TimeUnit.SECONDS);
            }
        }
    }

    static void share(String bootstrap, String group, String topic, int records) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, topic, 1);
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET))))
                .all().get(30, TimeUnit.SECONDS);
        }
        produce(bootstrap, topic, records);
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "share-client");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "4");
        int accepted = 0;
        int released = 0;
        int rejected = 0;
        int seen = 0;
        try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p)) {
            c.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 60000;
            while (System.currentTimeMillis() < deadline && accepted + rejected < records) {
                var polled = c.poll(Duration.ofMillis(500));
                for (ConsumerRecord<byte[], byte[]> rec : polled) {
                    seen++;
                    // every 5th delivery released once (redelivered later), every 7th offset rejected
                    AcknowledgeType type = rec.offset() % 7 == 3 ? AcknowledgeType.REJECT
                        : (seen % 5 == 0 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT);
                    c.acknowledge(rec, type);
                    if (type == AcknowledgeType.ACCEPT) {
                        accepted++;
                    } else if (type == AcknowledgeType.REJECT) {
                        rejected++;
                    } else {
                        released++;
                    }
                }
                if (!polled.isEmpty()) {
                    c.commitSync();
                }
            }
        }
        System.out.println("{\"share_group\": " + Oracle.str(group) + ", \"delivered\": " + seen + ", \"accepted\": "
            + accepted + ", \"released\": " + released + ", \"rejected\": " + rejected + "}");
    }

    static void streams(String bootstrap, String appId, String in, String out, int records) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            createTopic(admin, in, 1);
            createTopic(admin, out, 1);
        }
        produce(bootstrap, in, records);
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(in, Consumed.with(Serdes.String(), Serdes.String()))
            .groupByKey()
            .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("counts"))
                .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
            .toStream()
            .to(out, Produced.with(Serdes.String(), Serdes.Long()));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "500");
        p.put(StreamsConfig.STATE_DIR_CONFIG, System.getProperty("java.io.tmpdir") + "/kafkatool-streams-" + appId
            + "-" + ProcessHandle.current().pid());
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        long committed = -1;
        try (KafkaStreams streams = new KafkaStreams(builder.build(), p)) {
            streams.start();
            long deadline = System.currentTimeMillis() + 90000;
            try (Admin admin = admin(bootstrap)) {
                while (System.currentTimeMillis() < deadline) {
                    Thread.sleep(500);
                    try {
                        Map<TopicPartition, OffsetAndMetadata> offs = admin.listStreamsGroupOffsets(
                            Map.of(appId, new ListStreamsGroupOffsetsSpec())).partitionsToOffsetAndMetadata(appId)
                            .get(10, TimeUnit.SECONDS);
                        OffsetAndMetadata o = offs.get(new TopicPartition(in, 0));
                        if (o != null && o.offset() >= records) {
                            committed = o.offset();
                            break;
                        }
                    } catch (ExecutionException e) {
                        // group not there yet
                    }
                }
                // the described group while the member is still in it
                System.out.println(describeGroups(admin));
            }
            streams.close(Duration.ofSeconds(30));
        }
        System.out.println("{\"streams_group\": " + Oracle.str(appId) + ", \"committed\": " + committed + "}");
    }

    static void groups(String bootstrap) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            System.out.println(describeGroups(admin));
        }
    }

    static String opt(java.util.Optional<?> v) {
        return v.isPresent() ? Oracle.str(v.get().toString()) : "null";
    }

    static String partitions(Collection<TopicPartition> tps) {
        List<String> names = new ArrayList<>();
        for (TopicPartition tp : tps) {
            names.add(Oracle.str(tp.topic() + "-" + tp.partition()));
        }
        names.sort(String::compareTo);
        return names.toString();
    }

    /** Every group with its type, state, epochs, members and committed offsets (start offsets for share groups). */
    static String describeGroups(Admin admin) throws Exception {
        Collection<GroupListing> listings = admin.listGroups().all().get(30, TimeUnit.SECONDS);
        Map<String, GroupListing> byId = new TreeMap<>();
        for (GroupListing l : listings) {
            byId.put(l.groupId(), l);
        }
        StringBuilder b = new StringBuilder("{\"groups\": [");
        boolean first = true;
        for (GroupListing l : byId.values()) {
            if (!first) {
                b.append(", ");
            }
            first = false;
            String type = l.type().map(Object::toString).orElse("unknown");
            b.append("{\"group_id\": ").append(Oracle.str(l.groupId()))
                .append(", \"type\": ").append(Oracle.str(type))
                .append(", \"protocol\": ").append(Oracle.str(l.protocol()))
                .append(", \"state\": ").append(opt(l.groupState()));
            if (type.equalsIgnoreCase("share")) {
                ShareGroupDescription d = admin.describeShareGroups(List.of(l.groupId())).all()
                    .get(30, TimeUnit.SECONDS).get(l.groupId());
                b.append(", \"group_epoch\": ").append(d.groupEpoch())
                    .append(", \"target_assignment_epoch\": ").append(d.targetAssignmentEpoch())
                    .append(", \"members\": [");
                boolean f2 = true;
                for (ShareMemberDescription m : d.members()) {
                    b.append(f2 ? "" : ", ").append("{\"member_id\": ").append(Oracle.str(m.consumerId()))
                        .append(", \"client_id\": ").append(Oracle.str(m.clientId()))
                        .append(", \"member_epoch\": ").append(m.memberEpoch())
                        .append(", \"assignment\": ").append(partitions(m.assignment().topicPartitions()))
                        .append("}");
                    f2 = false;
                }
                b.append("], \"offsets\": {");
                Map<TopicPartition, Object> offs = new TreeMap<>(
                    (x, y) -> (x.topic() + "-" + x.partition()).compareTo(y.topic() + "-" + y.partition()));
                offs.putAll(shareOffsets(admin, l.groupId()));
                f2 = true;
                for (var e : offs.entrySet()) {
                    b.append(f2 ? "" : ", ").append(Oracle.str(e.getKey().topic() + "-" + e.getKey().partition()))
                        .append(": ").append(shareOffsetJson(e.getValue()));
                    f2 = false;
                }
                b.append("}");
            } else if (type.equalsIgnoreCase("streams")) {
                StreamsGroupDescription d = admin.describeStreamsGroups(List.of(l.groupId())).all()
                    .get(30, TimeUnit.SECONDS).get(l.groupId());
                b.append(", \"group_epoch\": ").append(d.groupEpoch())
                    .append(", \"target_assignment_epoch\": ").append(d.targetAssignmentEpoch())
                    .append(", \"topology_epoch\": ").append(d.topologyEpoch())
                    .append(", \"subtopologies\": ").append(d.subtopologies().size())
                    .append(", \"members\": [");
                boolean f2 = true;
                for (StreamsGroupMemberDescription m : d.members()) {
                    b.append(f2 ? "" : ", ").append("{\"member_id\": ").append(Oracle.str(m.memberId()))
                        .append(", \"client_id\": ").append(Oracle.str(m.clientId()))
                        .append(", \"member_epoch\": ").append(m.memberEpoch())
                        .append(", \"process_id\": ").append(Oracle.str(m.processId()))
                        .append(", \"assignment\": ").append(Oracle.str(m.assignment().toString()))
                        .append("}");
                    f2 = false;
                }
                b.append("], \"offsets\": ").append(offsets(admin.listStreamsGroupOffsets(Map.of(l.groupId(),
                    new ListStreamsGroupOffsetsSpec())).partitionsToOffsetAndMetadata(l.groupId())
                    .get(30, TimeUnit.SECONDS)));
            } else {
                b.append(", \"offsets\": ").append(offsets(admin.listConsumerGroupOffsets(l.groupId())
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)));
            }
            b.append("}");
        }
        return b.append("]}").toString();
    }

    static String offsets(Map<TopicPartition, OffsetAndMetadata> offs) {
        Map<String, OffsetAndMetadata> sorted = new TreeMap<>();
        for (var e : offs.entrySet()) {
            sorted.put(e.getKey().topic() + "-" + e.getKey().partition(), e.getValue());
        }
        StringBuilder b = new StringBuilder("{");
        for (var e : sorted.entrySet()) {
            if (b.length() > 1) {
                b.append(", ");
            }
            b.append(Oracle.str(e.getKey())).append(": ")
                .append(e.getValue() == null ? "null" : Long.toString(e.getValue().offset()));
        }
        return b.append("}").toString();
    }

    /**
     * A share group's start offsets: 4.2+'s {@code partitionsToOffsetInfo} (start offset, leader epoch, lag), or
     * 4.1's {@code partitionsToOffsetAndMetadata} (the start offset alone), whichever this release's admin client
     * has.
     */
    @SuppressWarnings("unchecked")
    static Map<TopicPartition, Object> shareOffsets(Admin admin, String groupId) throws Exception {
        Object result = admin.listShareGroupOffsets(Map.of(groupId, new ListShareGroupOffsetsSpec()));
        java.lang.reflect.Method method;
        try {
            method = result.getClass().getMethod("partitionsToOffsetInfo", String.class);
        } catch (NoSuchMethodException e) {
            method = result.getClass().getMethod("partitionsToOffsetAndMetadata", String.class);
        }
        var future = (org.apache.kafka.common.KafkaFuture<Map<TopicPartition, Object>>) method.invoke(result, groupId);
        return future.get(30, TimeUnit.SECONDS);
    }

    /** One share-partition offset as JSON: an object with what this release reports, or the start offset alone. */
    static String shareOffsetJson(Object info) throws Exception {
        if (info == null) {
            return "null";
        }
        if (info instanceof Number) {
            return info.toString();
        }
        if (info instanceof OffsetAndMetadata) {
            return Long.toString(((OffsetAndMetadata) info).offset());
        }
        Object start = info.getClass().getMethod("startOffset").invoke(info);
        Object epoch = info.getClass().getMethod("leaderEpoch").invoke(info);
        Object lag = info.getClass().getMethod("lag").invoke(info);
        return "{\"start_offset\": " + start + ", \"leader_epoch\": " + optional(epoch) + ", \"lag\": "
            + optional(lag) + "}";
    }

    private static String optional(Object value) {
        if (value instanceof java.util.Optional<?>) {
            return ((java.util.Optional<?>) value).map(Object::toString).orElse("null");
        }
        return String.valueOf(value);
    }
}
