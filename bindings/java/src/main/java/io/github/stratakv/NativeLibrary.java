package io.github.stratakv;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads the JNI library once, before the first native call.
 *
 * <p>The library is taken from the path in the system property {@value #PATH_PROPERTY} when it is
 * set; otherwise from the jar, under {@code native/<os>-<arch>/} (for example
 * {@code native/linux-x86_64/libstrata_jni.so}), copied to a temporary file and loaded from there.
 */
final class NativeLibrary {
    /** System property naming a library file to load instead of the one in the jar. */
    static final String PATH_PROPERTY = "strata.native.library";

    private NativeLibrary() {}

    /** Loads the library on first use; every class with native methods calls this first. */
    static void load() {
        Holder.touch();
    }

    /** The platform directory name, as the Maven build names it. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osName =
                os.startsWith("linux") ? "linux"
                : os.startsWith("mac") || os.startsWith("darwin") ? "osx"
                : os.startsWith("windows") ? "windows"
                : os;
        String archName =
                arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
                : arch.equals("aarch64") || arch.equals("arm64") ? "aarch64"
                : arch;
        return osName + "-" + archName;
    }

    /** Class initialisation loads the library exactly once, thread-safely. */
    private static final class Holder {
        static {
            String path = System.getProperty(PATH_PROPERTY);
            if (path != null) {
                System.load(Path.of(path).toAbsolutePath().toString());
            } else {
                loadFromJar();
            }
        }

        static void touch() {}

        private static void loadFromJar() {
            String name = System.mapLibraryName("strata_jni");
            String resource = "/native/" + platform() + "/" + name;
            try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new UnsatisfiedLinkError(
                            "Strata has no native library for this platform (" + platform()
                                    + "): " + resource + " is not in the jar; build it there with"
                                    + " Maven, or name a library file with -D" + PATH_PROPERTY);
                }
                Path file = Files.createTempFile("strata-jni-", "-" + name);
                try {
                    Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
                    System.load(file.toAbsolutePath().toString());
                } finally {
                    // A loaded library stays mapped once its file is gone, except on Windows.
                    try {
                        Files.delete(file);
                    } catch (IOException e) {
                        file.toFile().deleteOnExit();
                    }
                }
            } catch (IOException e) {
                UnsatisfiedLinkError error =
                        new UnsatisfiedLinkError("could not extract " + resource + ": " + e);
                error.initCause(e);
                throw error;
            }
        }
    }
}
