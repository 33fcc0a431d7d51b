package io.github.stratakv;

import static io.github.stratakv.StrataDBFactory.factory;
import static io.github.stratakv.TestSupport.bytes;
import static io.github.stratakv.TestSupport.contents;
import static io.github.stratakv.TestSupport.open;
import static io.github.stratakv.TestSupport.string;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Read-only opens beside a writer ({@code StrataOptions.readOnly}) and checkpoints. */
class ReadOnlyAndCheckpointTest {
    @TempDir Path dir;

    private static StrataDatabase openReadOnly(File path) throws IOException {
        return (StrataDatabase) factory.open(path, new StrataOptions().readOnly(true));
    }

    @Test
    void aReadOnlyOpenReadsBesideTheWriterAndCatchesUpOnRefresh() throws IOException {
        File path = dir.resolve("db").toFile();
        try (StrataDatabase writer = (StrataDatabase) open(path, new Options().createIfMissing(true))) {
            writer.put(bytes("a"), bytes("1"));
            writer.compactRange(null, null);
            writer.put(bytes("b"), bytes("2"));
            try (StrataDatabase reader = openReadOnly(path)) {
                assertTrue(reader.isReadOnly());
                assertFalse(writer.isReadOnly());
                assertEquals("1", string(reader.get(bytes("a"))), "from a table");
                assertEquals("2", string(reader.get(bytes("b"))), "from the log");
                writer.put(bytes("c"), bytes("3"));
                writer.delete(bytes("a"));
                assertNull(reader.get(bytes("c")), "the state at open until refresh");
                try (DBIterator before = reader.iterator()) {
                    reader.refresh();
                    assertEquals("3", string(reader.get(bytes("c"))));
                    assertNull(reader.get(bytes("a")));
                    before.seekToFirst();
                    assertEquals("a", string(before.next().getKey()), "an older iterator keeps its state");
                }
                writer.refresh(); // nothing to catch up with on the writer
                DBException refused = assertThrows(DBException.class, () -> reader.put(bytes("x"), bytes("y")));
                assertTrue(refused.getMessage().contains("read-only"), refused.getMessage());
                assertThrows(DBException.class, () -> reader.delete(bytes("b")));
                assertThrows(DBException.class, () -> reader.write(reader.createWriteBatch().put(bytes("x"), bytes("y"))));
                assertNull(writer.get(bytes("x")));
            }
        }
    }

    @Test
    void aReadOnlyOpenOfAMissingDatabaseFails() {
        File path = dir.resolve("missing").toFile();
        assertThrows(IOException.class, () -> openReadOnly(path));
        assertFalse(path.exists(), "a read-only open creates nothing");
    }

    @Test
    void aCheckpointHoldsTheDataOfItsMomentWhileWritesGoOn() throws Exception {
        File path = dir.resolve("db").toFile();
        File copy = dir.resolve("copy").toFile();
        try (StrataDatabase db = (StrataDatabase) open(path, new Options().createIfMissing(true))) {
            for (int i = 0; i < 2000; i++) {
                db.put(bytes(String.format("key%05d", i)), bytes("v" + i));
            }
            db.compactRange(null, null);
            for (int i = 0; i < 1000; i++) {
                db.put(bytes(String.format("key%05d", i)), bytes("w" + i));
            }
            // A writer keeps going during the checkpoint; only its writes before it count.
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger written = new AtomicInteger();
            Thread writer = new Thread(() -> {
                while (!stop.get()) {
                    db.put(bytes(String.format("late%07d", written.get())), bytes("x"));
                    written.incrementAndGet();
                }
            });
            TreeMap<String, String> before = contents(db);
            writer.start();
            db.checkpoint(copy);
            stop.set(true);
            writer.join();
            assertThrows(DBException.class, () -> db.checkpoint(copy), "into an existing directory");
            try (DB checkpoint = open(copy, new Options())) {
                TreeMap<String, String> copied = contents(checkpoint);
                TreeMap<String, String> withoutLate = new TreeMap<>(copied);
                withoutLate.keySet().removeIf(k -> k.startsWith("late"));
                assertEquals(before, withoutLate);
                int late = copied.size() - withoutLate.size();
                assertTrue(late <= written.get());
                for (int i = 0; i < late; i++) {
                    assertTrue(copied.containsKey(String.format("late%07d", i)), "a prefix of the late writes");
                }
            }
            try (StrataDatabase reader = openReadOnly(path)) {
                File fromReader = dir.resolve("from-reader").toFile();
                reader.checkpoint(fromReader);
                try (DB checkpoint = open(fromReader, new Options())) {
                    assertEquals(contents(reader), contents(checkpoint));
                }
            }
        }
    }
}
