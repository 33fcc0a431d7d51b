package io.github.stratakv;

import static io.github.stratakv.TestSupport.open;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Random;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The iterator reads ahead going forward and seeks back before any other move: random walks of
 * every kind of move, checked step by step against the sorted entries, with some values too
 * large for the scratch buffer among small ones.
 */
class IteratorReadAheadTest {
    @TempDir Path dir;

    private static byte[] key(int i) {
        return String.format("key%05d", i).getBytes(StandardCharsets.UTF_8);
    }

    /** Small values, and every 37th larger than the scratch (it takes the array path). */
    private static byte[] value(int i) {
        byte[] value = new byte[i % 37 == 0 ? Scratch.CAPACITY + 100 : 1 + i % 50];
        Arrays.fill(value, (byte) i);
        return value;
    }

    @Test
    void randomWalksSeeTheEntriesTheirPositionsSay() throws IOException {
        int count = 2000;
        try (DB db = open(dir)) {
            for (int i = 0; i < count; i++) {
                db.put(key(i), value(i));
            }
            Random random = new Random(42);
            for (int walk = 0; walk < 20; walk++) {
                try (DBIterator it = db.iterator()) {
                    // `at`: the index of the entry next() returns (count: the end).
                    int at = 0;
                    List<String> steps = new ArrayList<>();
                    for (int step = 0; step < 3000; step++) {
                        int move = random.nextInt(100);
                        String where = "walk " + walk + " after " + steps.subList(Math.max(0, steps.size() - 5), steps.size());
                        if (move < 60) {
                            // Runs of next(): what the read-ahead is for.
                            int run = 1 + random.nextInt(300);
                            for (int r = 0; r < run; r++) {
                                assertEquals(at < count, it.hasNext(), where);
                                if (at == count) {
                                    assertThrows(NoSuchElementException.class, it::next, where);
                                    break;
                                }
                                check(it.next(), at, where);
                                at++;
                            }
                            steps.add("next x" + run);
                        } else if (move < 70) {
                            if (at < count) {
                                check(it.peekNext(), at, where);
                            }
                            steps.add("peekNext");
                        } else if (move < 80) {
                            assertEquals(at > 0, it.hasPrev(), where);
                            if (at > 0) {
                                at--;
                                check(it.prev(), at, where);
                            } else {
                                assertThrows(NoSuchElementException.class, it::prev, where);
                            }
                            steps.add("prev");
                        } else if (move < 85) {
                            if (at > 0) {
                                check(it.peekPrev(), at - 1, where);
                            }
                            steps.add("peekPrev");
                        } else if (move < 92) {
                            int target = random.nextInt(count + 10);
                            it.seek(key(target));
                            at = Math.min(target, count);
                            steps.add("seek " + target);
                        } else if (move < 96) {
                            it.seekToFirst();
                            at = 0;
                            steps.add("seekToFirst");
                        } else {
                            it.seekToLast();
                            at = count - 1;
                            steps.add("seekToLast");
                        }
                    }
                }
            }
        }
    }

    @Test
    void removeDeletesTheEntryLastReturnedWhileEntriesAreReadAhead() throws IOException {
        try (DB db = open(dir)) {
            for (int i = 0; i < 100; i++) {
                db.put(key(i), value(i));
            }
            try (DBIterator it = db.iterator()) {
                for (int i = 0; i < 10; i++) {
                    it.next();
                }
                it.remove();
                // The iterator keeps its view; the database lost the key.
                check(it.next(), 10, "after remove");
                assertEquals(null, db.get(key(9)));
                check(it.prev(), 10, "back");
                check(it.prev(), 9, "the removed entry, in the iterator's view");
            }
        }
    }

    private static void check(Map.Entry<byte[], byte[]> entry, int i, String where) {
        assertArrayEquals(key(i), entry.getKey(), where);
        assertArrayEquals(value(i), entry.getValue(), where);
    }
}
