package io.github.stratakv;

import static io.github.stratakv.StrataDBFactory.factory;
import static io.github.stratakv.TestSupport.bytes;
import static io.github.stratakv.TestSupport.open;
import static io.github.stratakv.TestSupport.string;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.Range;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** Misuse gets a typed exception, never a crash; what is never closed is closed by the cleaner. */
class MisuseTest {
    @TempDir Path dir;

    @Test
    void nullArgumentsThrowNullPointerException() throws IOException {
        try (DB db = open(dir); DBIterator it = db.iterator(); WriteBatch batch = db.createWriteBatch()) {
            List<Executable> calls = List.of(
                    () -> db.get(null),
                    () -> db.get(bytes("k"), null),
                    () -> db.put(null, bytes("v")),
                    () -> db.put(bytes("k"), null),
                    () -> db.put(bytes("k"), bytes("v"), null),
                    () -> db.delete(null),
                    () -> db.delete(bytes("k"), null),
                    () -> db.write(null),
                    () -> db.write(batch, null),
                    () -> db.iterator(null),
                    () -> db.getApproximateSizes((Range[]) null),
                    () -> db.getApproximateSizes(new Range[] {null}),
                    () -> db.getProperty(null),
                    () -> it.seek(null),
                    () -> batch.put(null, bytes("v")),
                    () -> batch.put(bytes("k"), null),
                    () -> batch.delete(null),
                    () -> factory.open(null, new Options()),
                    () -> factory.open(dir.toFile(), null),
                    () -> factory.destroy(null, new Options()),
                    () -> factory.repair(dir.toFile(), null));
            for (Executable call : calls) {
                assertThrows(NullPointerException.class, call);
            }
            db.compactRange(null, null);
            assertEquals(null, db.get(bytes("k")), "nothing was written");
        }
    }

    @Test
    void everyCallOnAClosedDatabaseThrows() throws IOException {
        DB db = open(dir);
        WriteBatch batch = db.createWriteBatch();
        db.close();
        db.close();
        List<Executable> calls = List.of(
                () -> db.get(bytes("k")),
                () -> db.get(bytes("k"), new ReadOptions()),
                () -> db.put(bytes("k"), bytes("v")),
                () -> db.put(bytes("k"), bytes("v"), new WriteOptions().sync(true)),
                () -> db.delete(bytes("k")),
                () -> db.write(batch),
                () -> db.iterator(),
                () -> db.getSnapshot(),
                () -> db.getApproximateSizes(new Range(bytes("a"), bytes("b"))),
                () -> db.getProperty("leveldb.stats"),
                () -> db.compactRange(null, null),
                () -> db.suspendCompactions(),
                () -> db.resumeCompactions());
        for (Executable call : calls) {
            assertEquals("the database is closed", assertThrows(DBException.class, call).getMessage());
        }
        batch.close();
        try (DB reopened = open(dir)) {
            assertEquals(null, reopened.get(bytes("k")));
        }
    }

    @Test
    @Timeout(60)
    void theCleanerClosesADatabaseNobodyClosed() throws Exception {
        openAndForget();
        // The forgotten database holds the directory's LOCK until the cleaner closes it.
        IOException locked = assertThrows(IOException.class, () -> open(dir).close(), "still open right after");
        assertTrue(locked.getMessage().contains("lock"), locked.getMessage());
        while (true) {
            System.gc();
            try (DB db = open(dir)) {
                assertEquals("kept", string(db.get(bytes("forgotten"))));
                return;
            } catch (IOException stillLocked) {
                Thread.sleep(50);
            }
        }
    }

    private void openAndForget() throws IOException {
        DB db = open(dir);
        db.put(bytes("forgotten"), bytes("kept"));
        DBIterator it = db.iterator();
        it.next();
        db.getSnapshot();
        db.createWriteBatch().put(bytes("a"), bytes("b"));
    }
}
