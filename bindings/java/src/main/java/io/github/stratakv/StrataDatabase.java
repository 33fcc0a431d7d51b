package io.github.stratakv;

import java.io.File;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.ReadOptions;

/**
 * What a Strata database offers beyond {@link DB}: every {@code DB} that {@link StrataDBFactory}
 * opens is one.
 *
 * <pre>{@code
 * StrataDatabase db = (StrataDatabase) factory.open(dir, new StrataOptions().readOnly(true));
 * db.refresh();
 * }</pre>
 */
public interface StrataDatabase extends DB {
    /**
     * Whether {@code key} has a value, and its length in bytes: {@code -1} when absent. Answered
     * from the tree alone: a large value kept in a value file ({@link
     * StrataOptions#valueSeparation(int)}) is not read, so this costs what a {@code get} of a small
     * value does.
     */
    long head(byte[] key);

    /** {@link #head(byte[])} with a snapshot, checksum verification and caching as for {@code get}. */
    long head(byte[] key, ReadOptions options);

    /**
     * The database's keys in order with their values' lengths, read from the tree alone: a value
     * kept in a value file ({@link StrataOptions#valueSeparation(int)}) is never read. Close it
     * when done.
     */
    StrataKeyIterator keyIterator();

    /** {@link #keyIterator()} with a snapshot, checksum verification and caching as for {@code get}. */
    StrataKeyIterator keyIterator(ReadOptions options);

    /** True when the database was opened with {@link StrataOptions#readOnly(boolean)}. */
    boolean isReadOnly();

    /**
     * Moves a read-only database to its writer's latest state, reading only what is new: every
     * write the writer acknowledged before the call is visible after it. Iterators and snapshots
     * made before keep the state they were made in. Does nothing on a database opened to write.
     *
     * @throws DBException if the writer's files cannot be read; the database keeps its state
     */
    void refresh();

    /**
     * Copies the database as it is now into the directory {@code dir}, which must not exist, while
     * writes go on: hard links to its tables (copies across file systems), a fresh manifest and the
     * live logs so far, all synced. The copy opens in Strata and in LevelDB with exactly that
     * moment's data. On a read-only database, the copy holds what it sees.
     *
     * @throws DBException if {@code dir} exists or the copy fails (nothing is left behind but
     *     what the engine's message names)
     */
    void checkpoint(File dir);
}
