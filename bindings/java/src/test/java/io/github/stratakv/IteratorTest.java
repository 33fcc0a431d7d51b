package io.github.stratakv;

import static io.github.stratakv.TestSupport.bytes;
import static io.github.stratakv.TestSupport.entries;
import static io.github.stratakv.TestSupport.open;
import static io.github.stratakv.TestSupport.string;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.DBIterator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code DBIterator}: both directions, seeks, peeks, remove, and its view of the database. */
class IteratorTest {
    @TempDir Path dir;
    DB db;

    @BeforeEach
    void fill() throws IOException {
        db = open(dir);
        for (String k : new String[] {"b", "d", "f", "h"}) {
            db.put(bytes(k), bytes(k.toUpperCase()));
        }
    }

    @AfterEach
    void close() throws IOException {
        db.close();
    }

    private static String key(Map.Entry<byte[], byte[]> e) {
        return string(e.getKey());
    }

    @Test
    void aNewIteratorStartsAtTheFirstEntry() throws IOException {
        try (DBIterator it = db.iterator()) {
            assertTrue(it.hasNext());
            assertFalse(it.hasPrev());
            assertEquals("b", key(it.peekNext()));
            assertEquals("B", string(it.next().getValue()));
        }
        List<String> keys = new ArrayList<>();
        for (Map.Entry<byte[], byte[]> e : db) {
            keys.add(key(e));
        }
        assertEquals(List.of("b", "d", "f", "h"), keys);
    }

    @Test
    void forwardToTheEndThenBackward() throws IOException {
        try (DBIterator it = db.iterator()) {
            it.seekToFirst();
            List<String> forward = new ArrayList<>();
            while (it.hasNext()) {
                forward.add(key(it.next()));
            }
            assertEquals(List.of("b", "d", "f", "h"), forward);
            assertThrows(NoSuchElementException.class, it::next);
            assertThrows(NoSuchElementException.class, it::peekNext);
            List<String> backward = new ArrayList<>();
            while (it.hasPrev()) {
                backward.add(key(it.prev()));
            }
            assertEquals(List.of("h", "f", "d", "b"), backward);
            assertThrows(NoSuchElementException.class, it::prev);
            assertThrows(NoSuchElementException.class, it::peekPrev);
            assertEquals("b", key(it.next()), "after prev() returned b, next() returns it again");
        }
    }

    @Test
    void seeksAndPeeks() throws IOException {
        try (DBIterator it = db.iterator()) {
            it.seek(bytes("c"));
            assertEquals("d", key(it.peekNext()));
            assertEquals("b", key(it.peekPrev()));
            assertEquals("d", key(it.peekNext()), "peeks do not move");
            assertEquals("b", key(it.prev()));
            assertEquals("b", key(it.next()));
            assertEquals("d", key(it.next()));
            it.seek(bytes("d"));
            assertEquals("d", key(it.next()));
            it.seek(bytes("z"));
            assertFalse(it.hasNext());
            assertEquals("h", key(it.peekPrev()));
            it.seekToLast();
            assertEquals("h", key(it.peekNext()));
            assertEquals("f", key(it.peekPrev()));
            it.seek(new byte[0]);
            assertEquals("b", key(it.next()));
        }
    }

    @Test
    void anEmptyDatabaseHasNothingEitherWay() throws IOException {
        for (String k : new String[] {"b", "d", "f", "h"}) {
            db.delete(bytes(k));
        }
        try (DBIterator it = db.iterator()) {
            assertFalse(it.hasNext());
            assertFalse(it.hasPrev());
            it.seekToLast();
            assertFalse(it.hasNext());
            assertThrows(NoSuchElementException.class, it::prev);
        }
    }

    @Test
    void theIteratorSeesTheDatabaseAsItWasWhenMade() throws IOException {
        try (DBIterator it = db.iterator()) {
            db.put(bytes("c"), bytes("new"));
            db.delete(bytes("f"));
            List<String> seen = new ArrayList<>();
            it.forEachRemaining(e -> seen.add(key(e)));
            assertEquals(List.of("b", "d", "f", "h"), seen);
        }
        assertEquals(List.of("b=B", "c=new", "d=D", "h=H"), entries(db));
    }

    @Test
    void removeDeletesTheLastReturnedKey() throws IOException {
        try (DBIterator it = db.iterator()) {
            assertThrows(IllegalStateException.class, it::remove);
            it.next();
            it.next();
            it.remove();
            assertThrows(IllegalStateException.class, it::remove, "once per returned entry");
            it.seekToLast();
            it.prev();
            it.remove();
        }
        assertNull(db.get(bytes("d")));
        assertNull(db.get(bytes("f")));
        assertEquals(List.of("b=B", "h=H"), entries(db));
    }

    @Test
    void closedIteratorsThrow() throws IOException {
        DBIterator it = db.iterator();
        it.close();
        it.close();
        DBException e = assertThrows(DBException.class, it::hasNext);
        assertEquals("the iterator is closed", e.getMessage());
        assertThrows(DBException.class, it::seekToFirst);
        assertThrows(DBException.class, it::next);
        assertThrows(DBException.class, it::prev);
        assertThrows(DBException.class, () -> it.seek(bytes("a")));
    }

    @Test
    void closingTheDatabaseClosesItsIterators() throws IOException {
        DBIterator it = db.iterator();
        assertTrue(it.hasNext());
        db.close();
        assertThrows(DBException.class, it::hasNext);
        assertThrows(DBException.class, () -> db.iterator());
        it.close();
    }

    @Test
    void manyTablesAndTheMemtableMergeInOrder() throws IOException {
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 3000; i++) {
                db.put(bytes(String.format("m%05d", i)), bytes(round + ":" + i));
            }
            db.compactRange(bytes("m"), bytes("n"));
        }
        db.delete(bytes("m00042"));
        int count = 0;
        String previous = "";
        try (DBIterator it = db.iterator()) {
            it.seek(bytes("m"));
            while (it.hasNext()) {
                Map.Entry<byte[], byte[]> e = it.next();
                String k = key(e);
                if (!k.startsWith("m")) {
                    break;
                }
                assertTrue(k.compareTo(previous) > 0);
                assertTrue(string(e.getValue()).startsWith("2:"));
                previous = k;
                count++;
            }
            it.seekToLast();
            int back = 0;
            while (it.hasPrev()) {
                it.prev();
                back++;
            }
            assertEquals(2999 + 4 - 1, back, "every entry but the last is before the last");
        }
        assertEquals(2999, count);
    }
}
