package io.github.stratakv;

import static io.github.stratakv.TestSupport.bytes;
import static io.github.stratakv.TestSupport.files;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.fusesource.leveldbjni.JniDBFactory;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBFactory;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.ReadOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real LevelDB (leveldbjni 1.8, in this JVM) and Strata open each other's directories with the
 * same contents, byte for byte.
 *
 * <p>leveldbjni 1.8 embeds a LevelDB older than 1.14, which names tables {@code .sst} and cannot
 * open {@code .ldb}, the name LevelDB 1.14+ and Strata write (LevelDB 1.23 reads both, and so does
 * Strata). So before leveldbjni opens a directory Strata wrote, its tables are renamed; their
 * bytes are not touched.
 */
@Timeout(180)
class InteropTest {
    @TempDir Path dir;

    /** Writes overwrites, deletions, tables on several levels and a log tail; returns the truth. */
    private static TreeMap<String, String> writeWorkload(DB db, int seed) {
        Random random = new Random(seed);
        TreeMap<String, String> expected = new TreeMap<>();
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 20_000; i++) {
                byte[] key = bytes(String.format("key%06d", random.nextInt(40_000)));
                byte[] value = new byte[random.nextInt(300)];
                random.nextBytes(value);
                if (random.nextInt(10) == 0) {
                    db.delete(key);
                    expected.remove(encode(key));
                } else {
                    db.put(key, value);
                    expected.put(encode(key), encode(value));
                }
            }
            if (round == 1) {
                db.compactRange(null, null);
            }
        }
        byte[] binaryKey = {0, (byte) 0xff, 1, (byte) 0x80};
        db.put(binaryKey, new byte[0]);
        expected.put(encode(binaryKey), "");
        return expected;
    }

    private static String encode(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }

    /** Every entry, read with checksums verified, in iteration order. */
    private static TreeMap<String, String> read(DB db) throws IOException {
        TreeMap<String, String> out = new TreeMap<>();
        String previous = null;
        try (DBIterator it = db.iterator(new ReadOptions().verifyChecksums(true))) {
            it.seekToFirst();
            while (it.hasNext()) {
                Map.Entry<byte[], byte[]> e = it.next();
                out.put(encode(e.getKey()), encode(e.getValue()));
                previous = encode(e.getKey());
            }
        }
        assertFalse(previous == null);
        return out;
    }

    private static DB open(DBFactory factory, Path path, Options options) throws IOException {
        return factory.open(path.toFile(), options);
    }

    private static void renameTablesForOldLevelDb(Path path) throws IOException {
        for (Path table : files(path, ".ldb")) {
            String name = table.getFileName().toString();
            Files.move(table, table.resolveSibling(name.replace(".ldb", ".sst")));
        }
    }

    @Test
    void aDirectoryWrittenByLevelDbOpensExactlyInStrata() throws IOException {
        TreeMap<String, String> expected;
        try (DB leveldb = open(JniDBFactory.factory, dir, new Options().createIfMissing(true).writeBufferSize(256 << 10))) {
            expected = writeWorkload(leveldb, 1);
            assertEquals(expected, read(leveldb));
        }
        assertFalse(files(dir, ".sst").isEmpty(), "LevelDB wrote tables");
        try (DB strata = open(StrataDBFactory.factory, dir, new Options().createIfMissing(false).paranoidChecks(true))) {
            assertEquals(expected, read(strata));
            assertEquals(expected.get(encode(bytes("key000123"))), encode(getOrEmpty(strata, "key000123")));
        }
    }

    private static byte[] getOrEmpty(DB db, String key) {
        byte[] value = db.get(bytes(key));
        return value == null ? new byte[0] : value;
    }

    @Test
    void aDirectoryWrittenByStrataOpensExactlyInLevelDb() throws IOException {
        checkStrataToLevelDb(new Options().createIfMissing(true).writeBufferSize(256 << 10));
    }

    @Test
    void aStrataDirectoryWithBloomFiltersOpensExactlyInLevelDb() throws IOException {
        StrataOptions options = new StrataOptions().bloomFilterBitsPerKey(10);
        options.createIfMissing(true).writeBufferSize(256 << 10);
        checkStrataToLevelDb(options);
    }

    private void checkStrataToLevelDb(Options strataOptions) throws IOException {
        TreeMap<String, String> expected;
        try (DB strata = open(StrataDBFactory.factory, dir, strataOptions)) {
            expected = writeWorkload(strata, 2);
        }
        assertFalse(files(dir, ".ldb").isEmpty(), "Strata wrote tables");
        renameTablesForOldLevelDb(dir);
        try (DB leveldb = open(JniDBFactory.factory, dir, new Options().createIfMissing(false).paranoidChecks(true))) {
            assertEquals(expected, read(leveldb));
            // And back: what LevelDB adds, Strata reads too.
            leveldb.put(bytes("written-by-leveldb"), bytes("yes"));
            expected.put(encode(bytes("written-by-leveldb")), encode(bytes("yes")));
            leveldb.compactRange(null, null);
        }
        try (DB strata = open(StrataDBFactory.factory, dir, new Options().paranoidChecks(true))) {
            assertEquals(expected, read(strata));
        }
    }
}
