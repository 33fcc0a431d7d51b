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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.Snapshot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link StrataOptions#valueSeparation(int)} and {@link StrataDatabase#head(byte[])}. */
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
