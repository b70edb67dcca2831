// Decodes lz4 blocks and frames as Kafka does, for tests/kafka/test_lz4.py (compiled there with javac against one
// Kafka version's classpath; not part of the Maven build).
//
// Input file: records of (kind u8, arg i32 BE, length i32 BE, bytes). Kind 0 is a block, decoded with
// LZ4Factory.fastestInstance().safeDecompressor() (what Lz4BlockInputStream holds) into a buffer of `arg` bytes;
// kind 1 is a frame, read to its end by Kafka's Lz4BlockInputStream with magic `arg` (magic 0 ignores the
// descriptor checksum, KAFKA-3160). One line per record on stdout: "ok <length> <sha-256 hex>" or "error <class>".
// The first line names the block decompressor and the one Kafka's stream holds.

import java.io.DataInputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.HexFormat;

import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

public final class Lz4Oracle {
    private static final String STREAM = "org.apache.kafka.common.compress.Lz4BlockInputStream";

    public static void main(String[] args) throws Exception {
        LZ4SafeDecompressor blocks = LZ4Factory.fastestInstance().safeDecompressor();
        Class<?> stream = Class.forName(STREAM);
        Constructor<?> ctor = null;
        for (Constructor<?> c : stream.getConstructors()) {
            if (c.getParameterCount() == 3) {
                ctor = c;
            }
        }
        Object supplier = ctor.getParameterTypes()[1].getMethod("create").invoke(null);
        Field held = stream.getDeclaredField("DECOMPRESSOR");
        held.setAccessible(true);
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        out.println("decompressor " + blocks.getClass().getName() + " kafka " + held.get(null).getClass().getName()
                );
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (DataInputStream in = new DataInputStream(new FileInputStream(args[0]))) {
            while (in.available() > 0) {
                int kind = in.readUnsignedByte();
                int arg = in.readInt();
                byte[] data = new byte[in.readInt()];
                in.readFully(data);
                byte[] result;
                try {
                    if (kind == 0) {
                        ByteBuffer dst = ByteBuffer.allocate(arg);
                        int n = blocks.decompress(ByteBuffer.wrap(data), 0, data.length, dst, 0, arg);
                        result = new byte[n];
                        dst.get(0, result);
                    } else {
                        InputStream frame = (InputStream) ctor.newInstance(ByteBuffer.wrap(data), supplier, arg == 0);
                        result = frame.readAllBytes();
                    }
                } catch (Throwable err) {
                    Throwable cause = err instanceof java.lang.reflect.InvocationTargetException ? err.getCause() : err;
                    out.println("error " + cause.getClass().getName());
                    continue;
                }
                out.println("ok " + result.length + " " + HexFormat.of().formatHex(sha.digest(result)));
            }
        }
        out.flush();
    }

}
