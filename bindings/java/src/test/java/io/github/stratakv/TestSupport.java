package io.github.stratakv;

import static io.github.stratakv.StrataDBFactory.factory;
import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;

/** Helpers shared by the tests. */
final class TestSupport {
    private TestSupport() {}

    static byte[] bytes(String s) {
        return s.getBytes(UTF_8);
    }

    static String string(byte[] b) {
        return b == null ? null : new String(b, UTF_8);
    }

    /** Opens (creating) a Strata database in {@code dir}. */
    static DB open(Path dir) throws IOException {
        return factory.open(dir.toFile(), new Options().createIfMissing(true));
    }

    static DB open(File dir, Options options) throws IOException {
        return factory.open(dir, options);
    }

    /** Every entry of {@code db}, in iteration order, as strings. */
    static List<String> entries(DB db) throws IOException {
        List<String> out = new ArrayList<>();
        try (DBIterator it = db.iterator()) {
            while (it.hasNext()) {
                Map.Entry<byte[], byte[]> e = it.next();
                out.add(string(e.getKey()) + "=" + string(e.getValue()));
            }
        }
        return out;
    }

    /** Every entry of {@code db} as a sorted map of strings (for comparing whole contents). */
    static TreeMap<String, String> contents(DB db) throws IOException {
        TreeMap<String, String> out = new TreeMap<>();
        try (DBIterator it = db.iterator()) {
            it.seekToFirst();
            while (it.hasNext()) {
                Map.Entry<byte[], byte[]> e = it.next();
                out.put(string(e.getKey()), string(e.getValue()));
            }
        }
        return out;
    }

    /** Names of the files in {@code dir} ending with {@code suffix}. */
    static List<Path> files(Path dir, String suffix) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().collect(java.util.stream.Collectors.toList());
        }
    }

    /** Total bytes of the files in {@code dir} ending with {@code suffix}. */
    static long size(Path dir, String suffix) throws IOException {
        long total = 0;
        for (Path p : files(dir, suffix)) {
            total += Files.size(p);
        }
        return total;
    }
}
