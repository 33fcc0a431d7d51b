package io.github.stratakv;

import java.io.File;
import java.io.IOException;
import java.util.Objects;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.DBFactory;
import org.iq80.leveldb.Options;

/**
 * Strata as an {@code org.iq80.leveldb} implementation: switch from leveldbjni or iq80's
 * pure-Java LevelDB by changing the factory line.
 *
 * <pre>{@code
 * import static io.github.stratakv.StrataDBFactory.factory;
 *
 * DB db = factory.open(new File("/tmp/example"), new Options().createIfMissing(true));
 * }</pre>
 *
 * <p>Databases are LevelDB 1.23's format: a directory written by LevelDB opens in Strata and the
 * reverse. Every {@link Options} field is honoured; {@link StrataOptions} adds a bloom filter and
 * read-only opens. Every database opened is a {@link StrataDatabase} (refresh, checkpoints).
 * Failures to open, destroy or repair are {@link IOException}s whose message is the engine's and
 * whose cause is a {@link DBException}; every other failure is a {@link DBException}.
 */
public final class StrataDBFactory implements DBFactory {
    /** The factory (it has no state). */
    public static final StrataDBFactory factory = new StrataDBFactory();

    static {
        NativeLibrary.load();
    }

    private StrataDBFactory() {}

    /**
     * Opens (with {@code createIfMissing}, creates) the database in {@code path}; with {@link
     * StrataOptions#readOnly(boolean)}, to read it beside its writer. The result is a {@link
     * StrataDatabase}.
     *
     * @throws IOException if it cannot be opened: missing, locked by another process, damaged,
     *     or recorded with another comparator
     */
    @Override
    public DB open(File path, Options options) throws IOException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(options, "options");
        return new StrataDB(reportingIo(() -> open(path.getPath(), options)));
    }

    /** Deletes every file of the database in {@code path}, and the directory if it is then empty. */
    @Override
    public void destroy(File path, Options options) throws IOException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(options, "options");
        reportingIo(() -> {
            destroy(path.getPath(), options);
            return null;
        });
    }

    /**
     * Rebuilds the database in {@code path} from whatever tables and logs can still be read; what
     * could not be used is moved to {@code lost/} and named in the database's {@code LOG}.
     */
    @Override
    public void repair(File path, Options options) throws IOException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(options, "options");
        reportingIo(() -> {
            repair(path.getPath(), options);
            return null;
        });
    }

    /** Runs a native call, its {@link DBException} rethrown as the {@link IOException} the API declares. */
    private static <T> T reportingIo(java.util.function.Supplier<T> call) throws IOException {
        try {
            return call.get();
        } catch (DBException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "Strata";
    }

    private static native long open(String path, Options options);

    private static native void destroy(String path, Options options);

    private static native void repair(String path, Options options);
}
