package io.github.stratakv;

import static io.github.stratakv.TestSupport.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.fusesource.leveldbjni.JniDBFactory;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBFactory;
import org.iq80.leveldb.Options;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The LOCK file keeps a second JVM out, whether it runs Strata or real LevelDB (leveldbjni). */
@Timeout(120)
class LockTest {
    @TempDir Path dir;

    /** What {@link LockProbe} in a second JVM says when it opens {@code dir} with {@code factory}. */
    private String probe(String factory) throws IOException, InterruptedException {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process process = new ProcessBuilder(java.toString(), "-cp", classpath, LockProbe.class.getName(), factory, dir.toString())
                .redirectErrorStream(true)
                .start();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the probe JVM ends");
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, process.exitValue(), output);
        return output;
    }

    private void holdWith(DBFactory factory, String... probes) throws Exception {
        try (DB db = factory.open(dir.toFile(), new Options().createIfMissing(true))) {
            db.put(bytes("key"), bytes("value"));
            for (String probe : probes) {
                String output = probe(probe);
                assertTrue(output.startsWith("refused: ") && output.toLowerCase().contains("lock"),
                        probe + " in a second JVM while " + factory + " holds the database: " + output);
            }
        }
        // Last probe first: a Strata open turns the log into an .ldb table, a name leveldbjni 1.8's
        // LevelDB (older than 1.14) cannot read (see InteropTest).
        for (int i = probes.length - 1; i >= 0; i--) {
            assertEquals("opened true", probe(probes[i]), probes[i] + " once the database is closed");
        }
    }

    @Test
    void strataKeepsASecondJvmOut() throws Exception {
        holdWith(StrataDBFactory.factory, "strata", "leveldbjni");
    }

    @Test
    void leveldbKeepsStrataOut() throws Exception {
        holdWith(JniDBFactory.factory, "strata");
    }

    @Test
    void aSecondOpenInTheSameJvmIsRefused() throws Exception {
        File path = dir.toFile();
        try (DB db = StrataDBFactory.factory.open(path, new Options())) {
            IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class,
                    () -> StrataDBFactory.factory.open(path, new Options()));
            assertTrue(e.getMessage().contains("already held by this process"), e.getMessage());
            db.put(bytes("still"), bytes("usable"));
        }
    }
}
