package io.github.stratakv;

import java.io.File;
import org.fusesource.leveldbjni.JniDBFactory;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBFactory;
import org.iq80.leveldb.Options;

/**
 * Run in a second JVM by {@link LockTest}: opens {@code args[1]} with the factory {@code args[0]}
 * ({@code strata} or {@code leveldbjni}) and prints {@code opened} or {@code refused: <message>}.
 */
public final class LockProbe {
    private LockProbe() {}

    public static void main(String[] args) {
        DBFactory factory = args[0].equals("strata") ? StrataDBFactory.factory : JniDBFactory.factory;
        try (DB db = factory.open(new File(args[1]), new Options().createIfMissing(false))) {
            System.out.println("opened " + (db.get("key".getBytes()) != null));
        } catch (Exception e) {
            System.out.println("refused: " + e.getMessage());
        }
    }
}
