package io.github.stratakv;

import static io.github.stratakv.StrataDBFactory.factory;
import static io.github.stratakv.TestSupport.bytes;
import static io.github.stratakv.TestSupport.entries;
import static io.github.stratakv.TestSupport.string;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBComparator;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Java comparators called from native code, including ones that throw or answer nonsense. */
@Timeout(120)
class ComparatorTest {
    @TempDir Path dir;

    /** Reverse bytewise order; {@code failWhen} decides which calls throw. */
    static class Reverse implements DBComparator {
        final String name;
        volatile java.util.function.BiPredicate<byte[], byte[]> failWhen = (a, b) -> false;

        Reverse(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public int compare(byte[] a, byte[] b) {
            if (failWhen.test(a, b)) {
                throw new ComparatorFailure("cannot compare " + string(a) + " and " + string(b));
            }
            return java.util.Arrays.compareUnsigned(b, a);
        }

        @Override
        public byte[] findShortestSeparator(byte[] start, byte[] limit) {
            return start;
        }

        @Override
        public byte[] findShortSuccessor(byte[] key) {
            return key;
        }
    }

    static class ComparatorFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ComparatorFailure(String message) {
            super(message);
        }
    }

    private static boolean isBoom(byte[] key) {
        return string(key).startsWith("boom");
    }

    private DB open(DBComparator comparator) throws IOException {
        return factory.open(dir.toFile(), new Options().comparator(comparator).writeBufferSize(64 << 10));
    }

    @Test
    void keysFollowTheJavaOrderThroughTablesAndReopens() throws IOException {
        try (DB db = open(new Reverse("test.reverse"))) {
            for (int i = 0; i < 5000; i++) {
                db.put(bytes(String.format("k%05d", i)), bytes("v" + i));
            }
            db.compactRange(null, null);
            db.put(bytes("k99999"), bytes("newest"));
            List<String> keys = entries(db);
            assertEquals("k99999=newest", keys.get(0));
            assertEquals("k04999=v4999", keys.get(1));
            assertEquals("k00000=v0", keys.get(keys.size() - 1));
            try (DBIterator it = db.iterator()) {
                it.seek(bytes("k02500x"));
                assertEquals("k02500", string(it.next().getKey()), "seek follows the comparator");
            }
        }
        try (DB db = open(new Reverse("test.reverse"))) {
            assertEquals("v1234", string(db.get(bytes("k01234"))));
            assertEquals(5001, entries(db).size());
        }
    }

    @Test
    void aDifferentComparatorIsRefusedAtOpen() throws IOException {
        open(new Reverse("test.reverse")).close();
        IOException e = assertThrows(IOException.class, () -> open(new Reverse("test.other")));
        assertTrue(e.getMessage().contains("test.reverse") && e.getMessage().contains("test.other"), e.getMessage());
        assertThrows(IOException.class, () -> factory.open(dir.toFile(), new Options()));
    }

    /** The comparator's exception is the cause of {@code e}'s chain, and the message says so. */
    private static void assertComparatorFailure(Throwable e) {
        Throwable cause = e;
        while (cause != null && !(cause instanceof ComparatorFailure)) {
            cause = cause.getCause();
        }
        assertNotNull(cause, "the comparator's exception is in the cause chain of " + e);
        Throwable db = e instanceof DBException ? e : e.getCause();
        assertInstanceOf(DBException.class, db);
        assertTrue(db.getMessage().contains("comparator \"test.reverse\" threw"), db.getMessage());
    }

    @Test
    void aThrowingComparatorPoisonsTheDatabaseUntilReopened() throws IOException {
        Reverse comparator = new Reverse("test.reverse");
        comparator.failWhen = (a, b) -> isBoom(a) || isBoom(b);
        DB db = open(comparator);
        for (int i = 0; i < 100; i++) {
            db.put(bytes("key" + i), bytes("value" + i));
        }
        DBException first = assertThrows(DBException.class, () -> db.put(bytes("boom"), bytes("x")));
        assertComparatorFailure(first);
        comparator.failWhen = (a, b) -> false;
        DBException later = assertThrows(DBException.class, () -> db.get(bytes("key1")));
        assertComparatorFailure(later);
        assertSame(first.getCause(), later.getCause(), "the first exception is every call's cause");
        assertThrows(DBException.class, () -> db.put(bytes("more"), bytes("x")));
        assertThrows(DBException.class, () -> db.iterator());
        assertThrows(DBException.class, () -> db.compactRange(null, null));
        db.close();
        try (DB reopened = open(comparator)) {
            List<String> all = entries(reopened);
            assertEquals("value1", string(reopened.get(bytes("key1"))));
            assertTrue(all.size() == 100 || all.size() == 101, "the failed write may be in the log: " + all.size());
            List<String> sorted = new ArrayList<>(all);
            sorted.sort((x, y) -> y.split("=")[0].compareTo(x.split("=")[0]));
            assertEquals(sorted, all, "in the comparator's order");
        }
    }

    @Test
    void aComparatorThrowingInReadsAndIteratorsPoisonsToo() throws IOException {
        Reverse comparator = new Reverse("test.reverse");
        try (DB db = open(comparator)) {
            for (int i = 0; i < 100; i++) {
                db.put(bytes("key" + i), bytes("value" + i));
            }
            DBIterator it = db.iterator();
            comparator.failWhen = (a, b) -> isBoom(a) || isBoom(b);
            assertComparatorFailure(assertThrows(DBException.class, () -> it.seek(bytes("boom"))));
            assertComparatorFailure(assertThrows(DBException.class, it::hasNext));
            it.close();
        }
        comparator.failWhen = (a, b) -> isBoom(a) || isBoom(b);
        try (DB db = open(comparator)) {
            assertComparatorFailure(assertThrows(DBException.class, () -> db.get(bytes("boom"))));
        }
    }

    @Test
    void aComparatorThrowingInBackgroundWorkStopsWritesCleanly() throws Exception {
        Reverse comparator = new Reverse("test.reverse");
        Thread[] writers = new Thread[8];
        AtomicBoolean failing = new AtomicBoolean();
        comparator.failWhen = (a, b) -> failing.get() && !isWriter(writers);
        DB db = open(comparator);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<Integer>> done = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            int thread = t;
            done.add(pool.submit(() -> {
                writers[thread] = Thread.currentThread();
                byte[] value = new byte[500];
                int acknowledged = 0;
                try {
                    for (int i = 0; i < 20_000; i++) {
                        db.put(bytes(String.format("t%d-%06d", thread, i)), value);
                        acknowledged++;
                        if (thread == 0 && i == 200) {
                            failing.set(true);
                        }
                    }
                    return -acknowledged;
                } catch (DBException e) {
                    assertTrue(e.getMessage().contains("comparator") || e.getMessage().contains("background"), e.getMessage());
                    return acknowledged;
                }
            }));
        }
        pool.shutdown();
        assertTrue(pool.awaitTermination(100, TimeUnit.SECONDS), "no writer hangs");
        for (Future<Integer> f : done) {
            assertTrue(f.get() >= 0, "every writer is stopped by the failure");
        }
        assertComparatorFailure(assertThrows(DBException.class, () -> db.get(bytes("t0-000001"))));
        db.close();
        failing.set(false);
        try (DB reopened = open(comparator)) {
            List<String> keys = entries(reopened);
            for (int t = 0; t < 8; t++) {
                for (int i = 0; i < done.get(t).get(); i++) {
                    assertEquals(500, reopened.get(bytes(String.format("t%d-%06d", t, i))).length);
                }
            }
            List<String> sorted = new ArrayList<>(keys);
            sorted.sort((x, y) -> y.split("=")[0].compareTo(x.split("=")[0]));
            assertEquals(sorted, keys, "tables and logs read back in the comparator's order");
        }
    }

    private static boolean isWriter(Thread[] writers) {
        for (Thread w : writers) {
            if (w == Thread.currentThread()) {
                return true;
            }
        }
        return false;
    }

    @Test
    void aComparatorThrowingDuringOpenFailsTheOpenAndKeepsTheData() throws IOException {
        Reverse comparator = new Reverse("test.reverse");
        try (DB db = open(comparator)) {
            for (int i = 0; i < 1000; i++) {
                db.put(bytes("key" + i), bytes("value" + i));
            }
        }
        comparator.failWhen = (a, b) -> true;
        IOException e = assertThrows(IOException.class, () -> open(comparator));
        assertComparatorFailure(e);
        comparator.failWhen = (a, b) -> false;
        try (DB db = open(comparator)) {
            assertEquals(1000, entries(db).size(), "the failed open released the lock and lost nothing");
        }
    }

    @Test
    void wrongSeparatorsAndSuccessorsAreIgnored() throws IOException {
        DBComparator liar = new Reverse("test.reverse") {
            @Override
            public byte[] findShortestSeparator(byte[] start, byte[] limit) {
                return bytes("\u0000");
            }

            @Override
            public byte[] findShortSuccessor(byte[] key) {
                return null;
            }
        };
        try (DB db = open(liar)) {
            for (int i = 0; i < 20_000; i++) {
                db.put(bytes(String.format("k%05d", i)), bytes("v" + i));
            }
            db.compactRange(null, null);
            for (int i = 0; i < 20_000; i += 97) {
                assertEquals("v" + i, string(db.get(bytes(String.format("k%05d", i)))));
            }
            assertEquals(20_000, entries(db).size());
        }
    }

    @Test
    void aComparatorWithoutANameIsRefused() {
        Reverse nameless = new Reverse(null);
        IOException e = assertThrows(IOException.class, () -> open(nameless));
        assertTrue(e.getMessage().contains("name() returned null"), e.getMessage());
    }
}
