package io.github.stratakv;

import org.iq80.leveldb.Options;

/**
 * {@link Options} with what the {@code org.iq80.leveldb} API has no field for. Pass it to {@link
 * StrataDBFactory#open} like plain {@code Options}; other factories ignore the extra fields.
 *
 * <pre>{@code
 * Options options = new StrataOptions().bloomFilterBitsPerKey(10).createIfMissing(true);
 * }</pre>
 */
public class StrataOptions extends Options {
    private int bloomFilterBitsPerKey;
    private boolean readOnly;
    private int valueSeparation;

    /** Bits per key of the tables' bloom filter, or 0 (the default) for none. */
    public int bloomFilterBitsPerKey() {
        return bloomFilterBitsPerKey;
    }

    /**
     * Keeps a bloom filter of {@code bits} bits per key in every new table (LevelDB's built-in
     * filter, which LevelDB reads too): a read of an absent key then mostly skips the table's
     * data blocks. 10 bits give about 1% false positives; 0 turns filters off.
     *
     * @throws IllegalArgumentException if {@code bits} is negative
     */
    public StrataOptions bloomFilterBitsPerKey(int bits) {
        if (bits < 0) {
            throw new IllegalArgumentException("bloomFilterBitsPerKey must not be negative: " + bits);
        }
        this.bloomFilterBitsPerKey = bits;
        return this;
    }

    /** The size from which values are kept in value files beside the tree, or 0 (the default): off. */
    public int valueSeparation() {
        return valueSeparation;
    }

    /**
     * Keeps values of at least {@code minValueSize} bytes in value files beside the tree, as
     * Leveled does: compactions move small pointers instead of the values, and {@link
     * StrataDatabase#head(byte[])} answers without reading them. Garbage collection keeps the
     * value files within 1.5 times the live value bytes, with nothing to tune. Values are
     * compressed as table blocks are ({@link #compressionType}). 0 (the default) turns it off and
     * keeps the database in LevelDB's format. A database that ever had it on is refused by
     * LevelDB, and by Strata without it (the error names the option); once it holds compressed
     * values, also without compression.
     *
     * @throws IllegalArgumentException if {@code minValueSize} is negative
     */
    public StrataOptions valueSeparation(int minValueSize) {
        if (minValueSize < 0) {
            throw new IllegalArgumentException("valueSeparation must not be negative: " + minValueSize);
        }
        this.valueSeparation = minValueSize;
        return this;
    }

    /** Whether the database is opened read-only. */
    public boolean readOnly() {
        return readOnly;
    }

    /**
     * Opens the database to read it beside the process (Strata or LevelDB, leveldbjni included)
     * that may have it open and be writing: no {@code LOCK} is taken and nothing is written, so it
     * also works on a read-only directory. It shows the state at open until {@link
     * StrataDatabase#refresh()}; writes throw {@code DBException}; {@code createIfMissing} and
     * {@code errorIfExists} do not apply.
     */
    public StrataOptions readOnly(boolean readOnly) {
        this.readOnly = readOnly;
        return this;
    }
}
