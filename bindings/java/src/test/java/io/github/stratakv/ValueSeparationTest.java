package io.github.stratakv;

import static io.github.stratakv.StrataDBFactory.factory;
import static io.github.stratakv.TestSupport.bytes;
import static io.github.stratakv.TestSupport.files;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.NoSuchElementException;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.Snapshot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link StrataOptions#valueSeparation(int)}, {@link StrataDatabase#head(byte[])} and {@link
 * StrataDatabase#keyIterator()}.
 */
class ValueSeparationTest {
    @TempDir Path dir;

    private static byte[] value(int length, char fill) {
        byte[] value = new byte[length];
        Arrays.fill(value, (byte) fill);
        return value;
    }

    private StrataDatabase open(Options options) throws IOException {
        return (StrataDatabase) factory.open(dir.toFile(), options);
    }

    @Test
    void largeValuesGoToValueFilesAndHeadAnswersTheirLengths() throws IOException {
        try (StrataDatabase db = open(new StrataOptions().valueSeparation(1024).createIfMissing(true))) {
            db.put(bytes("large"), value(50_000, 'l'));
            db.put(bytes("small"), value(10, 's'));
            db.put(bytes("empty"), new byte[0]);
            assertEquals(50_000, db.head(bytes("large")));
            assertEquals(10, db.head(bytes("small")));
            assertEquals(0, db.head(bytes("empty")));
            assertEquals(-1, db.head(bytes("absent")));
            assertArrayEquals(value(50_000, 'l'), db.get(bytes("large")));

            Snapshot before = db.getSnapshot();
            db.put(bytes("large"), value(70_000, 'm'));
            db.delete(bytes("small"));
            assertEquals(70_000, db.head(bytes("large")));
            assertEquals(-1, db.head(bytes("small")));
            ReadOptions atSnapshot = new ReadOptions().snapshot(before);
            assertEquals(50_000, db.head(bytes("large"), atSnapshot));
            assertEquals(10, db.head(bytes("small"), atSnapshot));
            before.close();
            db.compactRange(null, null);
            assertEquals(70_000, db.head(bytes("large"), new ReadOptions().verifyChecksums(true)));
        }
        assertFalse(files(dir, ".vlog").isEmpty(), "the large values are in value files");
        try (StrataDatabase db = open(new StrataOptions().valueSeparation(1024))) {
            assertArrayEquals(value(70_000, 'm'), db.get(bytes("large")), "after a reopen");
            assertEquals(70_000, db.head(bytes("large")));
        }
    }

    @Test
    void aDatabaseWithValueFilesIsRefusedWithoutTheOption() throws IOException {
        try (StrataDatabase db = open(new StrataOptions().valueSeparation(1024).createIfMissing(true))) {
            db.put(bytes("large"), value(5_000, 'l'));
        }
        IOException e = assertThrows(IOException.class, () -> factory.open(dir.toFile(), new Options()));
        assertTrue(e.getMessage().contains("value_separation"), "names the option: " + e.getMessage());
    }

    @Test
    void theKeyIteratorGivesKeysAndLengthsWithoutReadingValueFiles() throws IOException {
        try (StrataDatabase db = open(new StrataOptions().valueSeparation(1024).createIfMissing(true))) {
            for (int i = 0; i < 20; i++) {
                db.put(bytes(String.format("key%02d", i)), value(i % 2 == 0 ? 3_000 + i : i, 'v'));
            }
            // In a table: recovery would drop logged writes whose values are gone.
            db.compactRange(null, null);
        }
        // Every value file wiped: a scan of keys must not notice, a get of a large value must.
        for (Path file : files(dir, ".vlog")) {
            Files.write(file, new byte[(int) Files.size(file)]);
        }
        StrataKeyIterator leftOpen;
        try (StrataDatabase db = open(new StrataOptions().valueSeparation(1024))) {
            Snapshot before = db.getSnapshot();
            db.delete(bytes("key03"));
            try (StrataKeyIterator keys = db.keyIterator()) {
                int seen = 0;
                while (keys.hasNext()) {
                    Map.Entry<byte[], Long> entry = keys.next();
                    int i = Integer.parseInt(new String(entry.getKey(), StandardCharsets.UTF_8).substring(3));
                    assertTrue(i != 3, "a deleted key");
                    assertEquals(i % 2 == 0 ? 3_000 + i : i, (long) entry.getValue(), "key " + i);
                    seen++;
                }
                assertEquals(19, seen);
                assertThrows(NoSuchElementException.class, keys::next);
                keys.seek(bytes("key10"));
                assertArrayEquals(bytes("key10"), keys.peekNext().getKey());
                assertEquals(3_010L, (long) keys.next().getValue());
                assertArrayEquals(bytes("key11"), keys.next().getKey());
                keys.seekToFirst();
                assertArrayEquals(bytes("key00"), keys.next().getKey());
            }
            try (StrataKeyIterator keys = db.keyIterator(new ReadOptions().snapshot(before))) {
                keys.seek(bytes("key03"));
                assertEquals(3L, (long) keys.next().getValue(), "the snapshot still sees key03");
            }
            before.close();
            assertThrows(DBException.class, () -> db.get(bytes("key00")), "the value file is damaged");
            StrataKeyIterator closed = db.keyIterator();
            closed.close();
            assertThrows(DBException.class, closed::hasNext);
            leftOpen = db.keyIterator();
            assertThrows(NullPointerException.class, () -> leftOpen.seek(null));
        }
        assertThrows(DBException.class, leftOpen::hasNext, "closing the database empties it");
    }

    @Test
    void separatedValuesAreCompressedAsTableBlocksAre() throws IOException {
        for (CompressionType compression : CompressionType.values()) {
            Path db = dir.resolve(compression.name());
            Options options = new StrataOptions().valueSeparation(1024).compressionType(compression).createIfMissing(true);
            try (StrataDatabase strata = (StrataDatabase) factory.open(db.toFile(), options)) {
                for (int i = 0; i < 100; i++) {
                    strata.put(bytes(String.format("key%05d", i)), value(4_000, 'v'));
                }
                long total = Long.parseLong(strata.getProperty("strata.value-files.total-bytes"));
                // 400,000 bytes of one repeated letter: Snappy stores a small share of them.
                boolean compressed = compression == CompressionType.SNAPPY;
                assertTrue(compressed ? total < 100_000 : total > 400_000, compression + ": " + total + " bytes");
                assertArrayEquals(value(4_000, 'v'), strata.get(bytes("key00007")));
            }
            if (compression == CompressionType.SNAPPY) {
                Options plain = new StrataOptions().valueSeparation(1024).compressionType(CompressionType.NONE);
                IOException e = assertThrows(IOException.class, () -> factory.open(db.toFile(), plain));
                assertTrue(e.getMessage().contains("value-compression"), e.getMessage());
            }
        }
    }

    @Test
    void headWorksWithoutValueSeparationAndRefusesMisuse() throws IOException {
        try (StrataDatabase db = open(new Options().createIfMissing(true))) {
            db.put(bytes("k"), value(5_000, 'v'));
            assertEquals(5_000, db.head(bytes("k")));
            assertEquals(-1, db.head(bytes("other")));
            assertThrows(NullPointerException.class, () -> db.head(null));
            assertThrows(NullPointerException.class, () -> db.head(bytes("k"), null));
            assertThrows(IllegalArgumentException.class, () -> new StrataOptions().valueSeparation(-1));
        }
        assertTrue(files(dir, ".vlog").isEmpty(), "off by default: LevelDB's format");
        assertTrue(Files.exists(dir.resolve("CURRENT")));
    }
}
