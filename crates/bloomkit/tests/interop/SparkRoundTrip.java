// The Spark side of tests/interop/spark.rs, compiled and run by that test against the
// spark-sketch jar. Argument: a file of jobs, one a line:
//   write FUNNEL VERSION N FPP SEED FILTER ANSWERS PROBES
//       BloomFilter.create(VERSION, N, optimalNumOfBits(N, FPP), SEED), items 0…N−1 put,
//       writeTo(FILTER); then mightContain… of items 0…PROBES−1 as '0'/'1' into ANSWERS
//   read FUNNEL FILTER ANSWERS PROBES
//       BloomFilter.readFrom(FILTER); the same answers into ANSWERS
// FUNNEL is utf8 (putString), long (putLong) or bytes (putBinary); VERSION is V1 or V2;
// item(funnel, i) must match the Rust test's.
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.spark.util.sketch.BloomFilter;

public final class SparkRoundTrip {
  static String string(int i) {
    return "item-" + i + (i % 3 == 0 ? "-\u00e9" : i % 3 == 1 ? "-\uD83D\uDE00" : "");
  }

  static long number(int i) {
    return i * 0x9E3779B97F4A7C15L;
  }

  static byte[] bytes(int i) {
    byte[] b = new byte[i % 37];
    for (int j = 0; j < b.length; j++) {
      b[j] = (byte) (i * 31 + j * 7);
    }
    return b;
  }

  static void put(BloomFilter bf, String funnel, int i) {
    switch (funnel) {
      case "utf8": bf.putString(string(i)); break;
      case "long": bf.putLong(number(i)); break;
      case "bytes": bf.putBinary(bytes(i)); break;
      default: throw new IllegalArgumentException(funnel);
    }
  }

  static boolean mightContain(BloomFilter bf, String funnel, int i) {
    switch (funnel) {
      case "utf8": return bf.mightContainString(string(i));
      case "long": return bf.mightContainLong(number(i));
      case "bytes": return bf.mightContainBinary(bytes(i));
      default: throw new IllegalArgumentException(funnel);
    }
  }

  static void answers(BloomFilter bf, String funnel, String path, int probes) throws Exception {
    StringBuilder out = new StringBuilder(probes);
    for (int i = 0; i < probes; i++) {
      out.append(mightContain(bf, funnel, i) ? '1' : '0');
    }
    Files.write(Paths.get(path), out.toString().getBytes(StandardCharsets.US_ASCII));
  }

  public static void main(String[] args) throws Exception {
    for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
      String[] f = line.trim().split(" ");
      if (f[0].equals("write")) {
        int n = Integer.parseInt(f[3]);
        long bits = BloomFilter.optimalNumOfBits(n, Double.parseDouble(f[4]));
        BloomFilter bf = BloomFilter.create(
            BloomFilter.Version.valueOf(f[2]), n, bits, Integer.parseInt(f[5]));
        for (int i = 0; i < n; i++) {
          put(bf, f[1], i);
        }
        try (OutputStream out = new FileOutputStream(f[6])) {
          bf.writeTo(out);
        }
        answers(bf, f[1], f[7], Integer.parseInt(f[8]));
      } else if (f[0].equals("read")) {
        BloomFilter bf;
        try (InputStream in = new FileInputStream(f[2])) {
          bf = BloomFilter.readFrom(in);
        }
        answers(bf, f[1], f[3], Integer.parseInt(f[4]));
      } else if (!f[0].isEmpty()) {
        throw new IllegalArgumentException(line);
      }
    }
  }
}
