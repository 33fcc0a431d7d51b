package io.github.stratakv;

import static io.github.stratakv.TestSupport.bytes;
import static io.github.stratakv.TestSupport.contents;
import static io.github.stratakv.TestSupport.open;
import static io.github.stratakv.TestSupport.string;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.Snapshot;
import org.iq80.leveldb.WriteBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Eight threads sharing one database. */
@Timeout(180)
class ThreadsTest {
    static final int THREADS = 8;
    @TempDir Path dir;

    @Test
    void eightThreadsWriteReadIterateAndSnapshotOneDatabase() throws Exception {
        try (DB db = StrataDBFactory.factory.open(dir.toFile(), new Options().writeBufferSize(256 << 10))) {
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                work.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 5000; i++) {
                        String key = String.format("t%d-%05d", thread, i);
                        if (i % 10 == 0) {
                            try (WriteBatch batch = db.createWriteBatch()) {
                                batch.put(bytes(key), bytes("batched" + i)).put(bytes(key + "-pair"), bytes("batched" + i));
                                db.write(batch);
                            }
                        } else {
                            db.put(bytes(key), bytes("value" + i));
                        }
                        assertTrue(db.get(bytes(key)) != null, "a thread reads its own write");
                        if (i % 500 == 0) {
                            try (Snapshot snapshot = db.getSnapshot();
                                    DBIterator it = db.iterator(new ReadOptions().snapshot(snapshot))) {
                                it.seek(bytes(String.format("t%d-", thread)));
                                int mine = 0;
                                while (it.hasNext() && string(it.peekNext().getKey()).startsWith("t" + thread + "-")) {
                                    Map.Entry<byte[], byte[]> e = it.next();
                                    String k = string(e.getKey());
                                    if (k.endsWith("-pair")) {
                                        String base = k.substring(0, k.length() - 5);
                                        assertEquals(string(e.getValue()),
                                                string(db.get(bytes(base), new ReadOptions().snapshot(snapshot))),
                                                "a batch is seen whole");
                                    } else {
                                        mine++;
                                    }
                                }
                                assertEquals(i + 1, mine, "the snapshot holds every write this thread made");
                            }
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : work) {
                f.get();
            }
            pool.shutdown();
            TreeMap<String, String> all = contents(db);
            assertEquals(THREADS * (5000 + 500), all.size());
            assertEquals("value4999", all.get("t7-04999"));
            assertEquals("batched4990", all.get("t3-04990-pair"));
        }
    }

    @Test
    void closeWhileOtherThreadsUseTheDatabase() throws Exception {
        DB db = open(dir);
        for (int i = 0; i < 1000; i++) {
            db.put(bytes("k" + i), bytes("v" + i));
        }
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger closedErrors = new AtomicInteger();
        CountDownLatch running = new CountDownLatch(THREADS);
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            work.add(pool.submit(() -> {
                running.countDown();
                DBIterator it = null;
                try {
                    it = db.iterator();
                    for (int i = 0; ; i++) {
                        switch ((thread + i) % 4) {
                            case 0: db.put(bytes("w" + thread + "-" + i), bytes("x")); break;
                            case 1: db.get(bytes("k" + (i % 1000))); break;
                            case 2: if (!it.hasNext()) { it.seekToFirst(); } else { it.next(); } break;
                            default: db.getSnapshot().close(); break;
                        }
                        calls.incrementAndGet();
                    }
                } catch (DBException e) {
                    assertTrue(e.getMessage().endsWith("is closed"), e.getMessage());
                    closedErrors.incrementAndGet();
                }
                return null;
            }));
        }
        running.await();
        Thread.sleep(300);
        db.close();
        for (Future<?> f : work) {
            f.get(30, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertEquals(THREADS, closedErrors.get(), "every thread ends on a 'closed' error");
        assertTrue(calls.get() > 100);
        try (DB reopened = open(dir)) {
            assertEquals("v999", string(reopened.get(bytes("k999"))));
        }
    }
}
