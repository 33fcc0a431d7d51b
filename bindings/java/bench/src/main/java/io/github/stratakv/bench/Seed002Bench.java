package io.github.stratakv.bench;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.github.stratakv.StrataDBFactory;
import io.github.stratakv.StrataOptions;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.fusesource.leveldbjni.JniDBFactory;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBFactory;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.Snapshot;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;
import org.iq80.leveldb.impl.Iq80DBFactory;

/**
 * The scenarios of the walkthrough Java LevelDB users follow (seed 002), timed for Strata,
 * leveldbjni 1.8 and iq80's LevelDB 0.12 in one JVM, each engine behind the same {@code
 * org.iq80.leveldb} code. Each scenario runs once per engine at a tenth of its size to warm the
 * JIT, then {@code --repeat} times per engine, engines interleaved, each round starting with the
 * next engine (the first engine of a round pays for whatever the JIT is still compiling); the table
 * shows medians and the ratios of the peers' times to Strata's (above 1: Strata is faster). Every
 * engine gets the same {@code Options} (cache size, compression: iq80 has its Snappy codec on the
 * class path, see the pom), except where a scenario says otherwise.
 *
 * <p>Usage: {@code Seed002Bench [--num N] [--repeat R] [--dir DIR] [--only NAME;...]}; N (default
 * 1,000,000) is the walkthrough's key count; {@code --only} runs only the scenarios named (for
 * profiling one: the names are the {@code done:} lines). With {@code --rust-cached-get PROGRAM}
 * (the release build of {@code native/examples/cached_get.rs}; {@code run.sh} passes it) every
 * Strata round of the cached get is followed by the same calls made from Rust in that program,
 * and the table by the per-call JNI overhead: the medians' difference.
 */
public final class Seed002Bench {
    /** One engine under test. */
    private static final class Engine {
        final String name;
        final DBFactory factory;

        Engine(String name, DBFactory factory) {
            this.name = name;
            this.factory = factory;
        }
    }

    /** The phase of the cached get, whose Strata figure gives the JNI overhead. */
    private static final String CACHED_GET = "get of one cached key, per call";
    /** The same get made to the engine from Rust (Strata only), right after the Java calls. */
    private static final String CACHED_GET_RUST = "the same get from Rust, per call";

    private static final List<Engine> ENGINES = List.of(
            new Engine("Strata", StrataDBFactory.factory),
            new Engine("leveldbjni", JniDBFactory.factory),
            new Engine("iq80", Iq80DBFactory.factory));

    /** A timed scenario: runs on a fresh directory, returns its phases' times in nanoseconds. */
    private interface Scenario {
        Map<String, Long> run(Engine engine, File dir, int num) throws IOException;
    }

    private final Path root;
    private final int num;
    private final int repeat;
    /** Phase name to engine name to measured times. */
    private final Map<String, Map<String, List<Long>>> results = new LinkedHashMap<>();

    /** The scenarios to run; empty: all. */
    private final List<String> only;
    /** The program making the cached get from Rust, or null. */
    private final String rustCachedGet;

    private Seed002Bench(Path root, int num, int repeat, List<String> only, String rustCachedGet) {
        this.root = root;
        this.num = num;
        this.repeat = repeat;
        this.only = only;
        this.rustCachedGet = rustCachedGet;
    }

    public static void main(String[] args) throws IOException {
        int num = 1_000_000;
        int repeat = 3;
        Path dir = Path.of(System.getProperty("java.io.tmpdir"), "strata-seed002-bench");
        List<String> only = List.of();
        String rustCachedGet = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--num": num = Integer.parseInt(args[i + 1]); break;
                case "--repeat": repeat = Integer.parseInt(args[i + 1]); break;
                case "--dir": dir = Path.of(args[i + 1]); break;
                case "--only": only = List.of(args[i + 1].split(";")); break;
                case "--rust-cached-get": rustCachedGet = args[i + 1]; break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        new Seed002Bench(dir, num, repeat, only, rustCachedGet).runAll();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(UTF_8);
    }

    private static Options options() {
        return new Options().createIfMissing(true);
    }

    private void runAll() throws IOException {
        Map<String, Scenario> scenarios = new LinkedHashMap<>();
        scenarios.put("put, get, delete", this::putGetDelete);
        scenarios.put("random get", (e, d, n) -> randomGet(e, d, n, options(), "get random"));
        scenarios.put("random get, 100 MB cache",
                (e, d, n) -> randomGet(e, d, n, options().cacheSize(100 << 20), "get random, 100 MB cache"));
        scenarios.put("sync writes", this::syncWrites);
        scenarios.put("write batches", this::writeBatches);
        scenarios.put("snapshot scans", this::snapshotScans);
        scenarios.put("misses", (e, d, n) -> evenPutOddGet(e, d, n, options(), "(Snappy)"));
        scenarios.put("misses, bloom", this::bloom);
        scenarios.put("misses, no compression",
                (e, d, n) -> evenPutOddGet(e, d, n, options().compressionType(CompressionType.NONE), "(no compression)"));
        scenarios.put("cached get", this::cachedGet);

        System.out.printf("seed 002 scenarios, N = %,d, median of %d runs after a warm-up run at N/10%n", num, repeat);
        for (Map.Entry<String, Scenario> scenario : scenarios.entrySet()) {
            if (!only.isEmpty() && !only.contains(scenario.getKey())) {
                continue;
            }
            for (Engine engine : ENGINES) {
                runOnce(scenario.getValue(), engine, Math.max(1, num / 10), false);
            }
            for (int r = 0; r < repeat; r++) {
                for (int e = 0; e < ENGINES.size(); e++) {
                    runOnce(scenario.getValue(), ENGINES.get((r + e) % ENGINES.size()), num, true);
                }
            }
            System.err.println("done: " + scenario.getKey());
        }
        printTable();
        printJniOverhead();
    }

    private void runOnce(Scenario scenario, Engine engine, int n, boolean record) throws IOException {
        Path dir = root.resolve(engine.name);
        delete(dir);
        Map<String, Long> phases = scenario.run(engine, dir.toFile(), n);
        delete(dir);
        if (record) {
            for (Map.Entry<String, Long> phase : phases.entrySet()) {
                results.computeIfAbsent(phase.getKey(), k -> new LinkedHashMap<>())
                        .computeIfAbsent(engine.name, k -> new ArrayList<>())
                        .add(phase.getValue());
            }
        }
    }

    private static void delete(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }

    private static long median(List<Long> times) {
        long[] sorted = times.stream().mapToLong(Long::longValue).sorted().toArray();
        return sorted[sorted.length / 2];
    }

    private void printTable() {
        System.out.printf("%n| %-46s | %12s | %12s | %12s | %10s | %10s |%n", "scenario (phase)", "Strata",
                "leveldbjni", "iq80", "jni/Strata", "iq80/Strata");
        System.out.printf("|%s|%s|%s|%s|%s|%s|%n", "-".repeat(48), "-".repeat(14), "-".repeat(14), "-".repeat(14),
                "-".repeat(12), "-".repeat(12));
        for (Map.Entry<String, Map<String, List<Long>>> phase : results.entrySet()) {
            Map<String, List<Long>> byEngine = phase.getValue();
            boolean perOp = phase.getKey().endsWith("per call");
            String[] cells = new String[3];
            double[] values = new double[3];
            for (int i = 0; i < 3; i++) {
                List<Long> times = byEngine.get(ENGINES.get(i).name);
                values[i] = times == null ? Double.NaN : median(times);
                cells[i] = times == null ? "n/a"
                        : perOp ? String.format("%.0f ns", values[i]) : String.format("%.0f ms", values[i] / 1e6);
            }
            System.out.printf("| %-46s | %12s | %12s | %12s | %10s | %10s |%n", phase.getKey(), cells[0], cells[1],
                    cells[2], ratio(values[1], values[0]), ratio(values[2], values[0]));
        }
    }

    /** The JNI overhead line: Strata's cached get from Java against the same get from Rust. */
    private void printJniOverhead() {
        List<Long> java = results.getOrDefault(CACHED_GET, Map.of()).get(ENGINES.get(0).name);
        List<Long> rust = results.getOrDefault(CACHED_GET_RUST, Map.of()).get(ENGINES.get(0).name);
        if (java == null || rust == null) {
            return;
        }
        long fromJava = median(java);
        long fromRust = median(rust);
        System.out.printf("%nJNI overhead per call (a cached get): %d ns from Java - %d ns from Rust = %d ns%n",
                fromJava, fromRust, fromJava - fromRust);
    }

    /** Runs the Rust cached get for {@code calls} calls; its time per call in nanoseconds. */
    private long rustCachedGet(int calls) throws IOException {
        Process process = new ProcessBuilder(rustCachedGet, String.valueOf(calls))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        String output = new String(process.getInputStream().readAllBytes(), UTF_8).trim();
        try {
            if (process.waitFor() != 0) {
                throw new IOException(rustCachedGet + " failed: " + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        // "engine get of one cached key from Rust, per call: N ns"
        String[] words = output.split("\\s+");
        return Long.parseLong(words[words.length - 2]);
    }

    private static String ratio(double peer, double strata) {
        return Double.isNaN(peer) || Double.isNaN(strata) ? "n/a" : String.format("%.2fx", peer / strata);
    }

    /** Times {@code body} in nanoseconds. */
    private static long time(Runnable body) {
        long start = System.nanoTime();
        body.run();
        return System.nanoTime() - start;
    }

    /** Puts key{i} = value{i} for i < n. */
    private static void fill(DB db, int n) {
        for (int i = 0; i < n; i++) {
            db.put(bytes("key" + i), bytes("value" + i));
        }
    }

    /** The walkthrough's first program, timed per phase, then its compactRange. */
    private Map<String, Long> putGetDelete(Engine engine, File dir, int n) throws IOException {
        Map<String, Long> phases = new LinkedHashMap<>();
        try (DB db = engine.factory.open(dir, options())) {
            phases.put("put " + n, time(() -> fill(db, n)));
            phases.put("get (in order, all hit)", time(() -> {
                for (int i = 0; i < n; i++) {
                    byte[] value = db.get(bytes("key" + i));
                    if (!new String(value, UTF_8).equals("value" + i)) {
                        throw new AssertionError("something wrong!");
                    }
                }
            }));
            phases.put("delete", time(() -> {
                for (int i = 0; i < n; i++) {
                    db.delete(bytes("key" + i));
                }
            }));
            try {
                phases.put("compactRange(null, null)", time(() -> db.compactRange(null, null)));
            } catch (UnsupportedOperationException e) {
                // iq80 0.12 does not implement it: the table shows n/a.
            }
        }
        return phases;
    }

    /** n random gets of filled keys (the fill is not timed). */
    private Map<String, Long> randomGet(Engine engine, File dir, int n, Options options, String name)
            throws IOException {
        try (DB db = engine.factory.open(dir, options)) {
            fill(db, n);
            Random random = new Random(42);
            return Map.of(name, time(() -> {
                for (int i = 0; i < n; i++) {
                    int index = random.nextInt(n);
                    if (db.get(bytes("key" + index)) == null) {
                        throw new AssertionError("missing key" + index);
                    }
                }
            }));
        }
    }

    /** Every write synced (n/100 of them: the walkthrough's million took 90 s), then every 100th and 10th. */
    private Map<String, Long> syncWrites(Engine engine, File dir, int n) throws IOException {
        Map<String, Long> phases = new LinkedHashMap<>();
        try (DB db = engine.factory.open(dir, options())) {
            int synced = Math.max(1, n / 100);
            phases.put("put " + synced + ", each sync", time(() -> {
                for (int i = 0; i < synced; i++) {
                    db.put(bytes("key" + i), bytes("value" + i), new WriteOptions().sync(true));
                }
            }));
            for (int every : new int[] {100, 10}) {
                int count = Math.max(1, n / 10);
                phases.put("put " + count + ", sync every " + every, time(() -> {
                    for (int i = 0; i < count; i++) {
                        db.put(bytes("key" + i), bytes("value" + i), new WriteOptions().sync(i % every == 0));
                    }
                }));
            }
        }
        return phases;
    }

    /** n puts written in batches of 1, 10, 100 and 1000 (the walkthrough's loop), each on a fresh database. */
    private Map<String, Long> writeBatches(Engine engine, File dir, int n) throws IOException {
        Map<String, Long> phases = new LinkedHashMap<>();
        for (int size : new int[] {1, 10, 100, 1000}) {
            File sub = new File(dir, "batch" + size);
            Files.createDirectories(dir.toPath()); // LevelDB creates only the last directory
            try (DB db = engine.factory.open(sub, options())) {
                phases.put("put " + n + " in batches of " + size, time(() -> {
                    WriteBatch batch = db.createWriteBatch();
                    try {
                        for (int i = 0; i < n; i++) {
                            batch.put(bytes("key" + i), bytes("value" + i));
                            if (i % size == 0) {
                                db.write(batch);
                                batch.close();
                                batch = db.createWriteBatch();
                            }
                        }
                        db.write(batch);
                        batch.close();
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                }));
            }
        }
        return phases;
    }

    /** The walkthrough's snapshot program at n/10 keys: scan, overwrite every key, scan again. */
    private Map<String, Long> snapshotScans(Engine engine, File dir, int n) throws IOException {
        int count = Math.max(1, n / 10);
        try (DB db = engine.factory.open(dir, options())) {
            for (int i = 0; i < count; i++) {
                String padding = String.format("%010d", i);
                db.put(bytes("key" + padding), bytes("value" + padding));
            }
            return Map.of("snapshot: scan, overwrite " + count + ", rescan", time(() -> {
                try (Snapshot ss = db.getSnapshot()) {
                    scan(db, ss, count);
                    for (int i = 0; i < count; i++) {
                        String padding = String.format("%010d", i);
                        db.put(bytes("key" + padding), bytes("!value" + padding));
                    }
                    scan(db, ss, count);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            }));
        }
    }

    private static void scan(DB db, Snapshot ss, int expected) throws IOException {
        int k = 0;
        try (DBIterator it = db.iterator(new ReadOptions().snapshot(ss))) {
            it.seekToFirst();
            while (it.hasNext()) {
                Map.Entry<byte[], byte[]> entry = it.next();
                String padding = String.format("%010d", k);
                if (!Arrays.equals(entry.getKey(), bytes("key" + padding))
                        || !Arrays.equals(entry.getValue(), bytes("value" + padding))) {
                    throw new AssertionError("something wrong");
                }
                k++;
            }
        }
        if (k != expected) {
            throw new AssertionError("total " + k);
        }
    }

    /** The walkthrough's bloom and compression program: put even keys, get random odd ones, delete. */
    private Map<String, Long> evenPutOddGet(Engine engine, File dir, int n, Options options, String label)
            throws IOException {
        Map<String, Long> phases = new LinkedHashMap<>();
        try (DB db = engine.factory.open(dir, options)) {
            phases.put("put even keys " + label, time(() -> {
                for (int i = 0; i < n; i++) {
                    db.put(bytes("key" + 2 * i), bytes("value" + 2 * i));
                }
            }));
            Random random = new Random(7);
            phases.put("get random odd keys (misses) " + label, time(() -> {
                for (int i = 0; i < n; i++) {
                    if (db.get(bytes("key" + (2 * random.nextInt(n) + 1))) != null) {
                        throw new AssertionError("an odd key was found");
                    }
                }
            }));
            phases.put("delete even keys " + label, time(() -> {
                for (int i = 0; i < n; i++) {
                    db.delete(bytes("key" + 2 * i));
                }
            }));
        }
        return phases;
    }

    /**
     * Misses with Strata's bloom filter (10 bits per key). leveldbjni and iq80 cannot set one (the
     * {@code org.iq80.leveldb} API has no filter policy), so they run without: the walkthrough's
     * comparison is what a Java user can get from each.
     */
    private Map<String, Long> bloom(Engine engine, File dir, int n) throws IOException {
        Options options = engine.factory == StrataDBFactory.factory
                ? new StrataOptions().bloomFilterBitsPerKey(10).createIfMissing(true)
                : options();
        Map<String, Long> all = evenPutOddGet(engine, dir, n, options, "(Strata: bloom)");
        return Map.of("get random odd keys (misses) (Strata: bloom)", all.get("get random odd keys (misses) (Strata: bloom)"));
    }

    /**
     * Per-call cost of a get of one key in the memtable (5 n calls, after as many warm-up calls);
     * {@code examples/cached_get.rs} makes the same calls to the engine from Rust.
     */
    private Map<String, Long> cachedGet(Engine engine, File dir, int n) throws IOException {
        try (DB db = engine.factory.open(dir, options())) {
            byte[] key = bytes("key123456");
            db.put(key, bytes("value123456"));
            int calls = 5 * n;
            for (int i = 0; i < calls; i++) {
                db.get(key);
            }
            long nanos = time(() -> {
                for (int i = 0; i < calls; i++) {
                    if (db.get(key) == null) {
                        throw new AssertionError();
                    }
                }
            });
            if (engine.factory != StrataDBFactory.factory || rustCachedGet == null) {
                return Map.of(CACHED_GET, nanos / calls);
            }
            Map<String, Long> phases = new LinkedHashMap<>();
            phases.put(CACHED_GET, nanos / calls);
            phases.put(CACHED_GET_RUST, rustCachedGet(calls));
            return phases;
        }
    }
}
