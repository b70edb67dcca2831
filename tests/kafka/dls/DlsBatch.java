import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Runs one Kafka release's own DumpLogSegments many times in one JVM, each run's stdout, stderr and exit status
 * captured to files, so the per-version conformance test (tests/kafka/test_dls_conformance.py) pays one JVM
 * start per version instead of one per run.
 *
 * Usage: DlsBatch MAIN_CLASS PLAN OUT_DIR. PLAN holds one run per line, its arguments separated by tabs; run N
 * writes OUT_DIR/N.out, N.err and N.status (the exit code, or three lines when main threw: "uncaught", the exception's
 * class and its getMessage(), which the JVM's default handler would print above the stack trace).
 *
 * Each run sees fresh stdout and stderr streams: Java's System.out/err and, for the Scala tool of 3.9 to 4.2,
 * scala.Console's (which println writes to). Kafka's Exit procedures are replaced so that an exit ends the run,
 * not the JVM.
 */
public final class DlsBatch {
    private static final class ExitCalled extends RuntimeException {
        final int code;

        ExitCalled(int code) {
            super("exit " + code, null, false, false);
            this.code = code;
        }
    }

    private DlsBatch() {
    }

    public static void main(String[] args) throws Exception {
        Method main = Class.forName(args[0]).getMethod("main", String[].class);
        List<String> plan = Files.readAllLines(Path.of(args[1]), StandardCharsets.UTF_8);
        Path outDir = Path.of(args[2]);
        replaceExitProcedures();
        PrintStream realOut = System.out;
        PrintStream realErr = System.err;
        Charset charset = Charset.defaultCharset();
        for (int n = 0; n < plan.size(); n++) {
            String line = plan.get(n);
            String[] runArgs = line.isEmpty() ? new String[0] : line.split("\t", -1);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            PrintStream outStream = new PrintStream(out, true, charset);
            PrintStream errStream = new PrintStream(err, true, charset);
            String status;
            System.setOut(outStream);
            System.setErr(errStream);
            try {
                status = scala.Console.withErr(errStream, () -> scala.Console.withOut(outStream, () -> invoke(main, runArgs)));
            } finally {
                outStream.flush();
                errStream.flush();
                System.setOut(realOut);
                System.setErr(realErr);
            }
            Files.write(outDir.resolve(n + ".out"), out.toByteArray());
            Files.write(outDir.resolve(n + ".err"), err.toByteArray());
            Files.writeString(outDir.resolve(n + ".status"), status, StandardCharsets.UTF_8);
        }
    }

    /** Kafka's Exit (common.utils up to 4.3, common.utils.internals from 4.4): exit and halt throw instead. */
    private static void replaceExitProcedures() throws ReflectiveOperationException {
        Class<?> exit;
        try {
            exit = Class.forName("org.apache.kafka.common.utils.internals.Exit");
        } catch (ClassNotFoundException e) {
            exit = Class.forName("org.apache.kafka.common.utils.Exit");
        }
        Class<?> procedure = Class.forName(exit.getName() + "$Procedure");
        Object thrower = Proxy.newProxyInstance(DlsBatch.class.getClassLoader(), new Class<?>[] {procedure},
            (proxy, method, methodArgs) -> {
                if (method.getName().equals("execute")) {
                    throw new ExitCalled((Integer) methodArgs[0]);
                }
                return method.invoke(proxy, methodArgs);
            });
        exit.getMethod("setExitProcedure", procedure).invoke(null, thrower);
        exit.getMethod("setHaltProcedure", procedure).invoke(null, thrower);
    }

    private static String invoke(Method main, String[] runArgs) {
        try {
            main.invoke(null, (Object) runArgs);
            return "0";
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof ExitCalled) {
                return Integer.toString(((ExitCalled) cause).code);
            }
            return "uncaught\n" + cause.getClass().getName() + "\n" + cause.getMessage();
        } catch (ReflectiveOperationException e) {
            return "uncaught\n" + e.getClass().getName() + "\n" + e.getMessage();
        }
    }
}
