// The Guava side of tests/interop/guava.rs, compiled and run by that test against Debian's
// Guava jar. Argument: a file of jobs, one a line:
//   write FUNNEL N FPP FILTER ANSWERS PROBES  — BloomFilter.create(funnel, N, FPP), items 0…N−1
//                                               put, writeTo(FILTER); then mightContain of
//                                               items 0…PROBES−1 as '0'/'1' into ANSWERS
//   read FUNNEL FILTER ANSWERS PROBES          — BloomFilter.readFrom(FILTER, funnel); the same
//                                               answers into ANSWERS
// FUNNEL is utf8, long or bytes; item(funnel, i) must match the Rust test's.
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

public final class GuavaRoundTrip {
  static Object item(String funnel, int i) {
    switch (funnel) {
      case "utf8":
        return "item-" + i + (i % 3 == 0 ? "-\u00e9" : i % 3 == 1 ? "-\uD83D\uDE00" : "");
      case "long":
        return i * 0x9E3779B97F4A7C15L;
      case "bytes":
        byte[] b = new byte[i % 37];
        for (int j = 0; j < b.length; j++) {
          b[j] = (byte) (i * 31 + j * 7);
        }
        return b;
      default:
        throw new IllegalArgumentException(funnel);
    }
  }

  @SuppressWarnings("rawtypes")
  static Funnel funnel(String name) {
    switch (name) {
      case "utf8":
        return Funnels.stringFunnel(StandardCharsets.UTF_8);
      case "long":
        return Funnels.longFunnel();
      case "bytes":
        return Funnels.byteArrayFunnel();
      default:
        throw new IllegalArgumentException(name);
    }
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  static void answers(BloomFilter bf, String funnel, String path, int probes) throws Exception {
    StringBuilder out = new StringBuilder(probes);
    for (int i = 0; i < probes; i++) {
      out.append(bf.mightContain(item(funnel, i)) ? '1' : '0');
    }
    Files.write(Paths.get(path), out.toString().getBytes(StandardCharsets.US_ASCII));
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  public static void main(String[] args) throws Exception {
    for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
      String[] f = line.trim().split(" ");
      if (f[0].equals("write")) {
        int n = Integer.parseInt(f[2]);
        BloomFilter bf = BloomFilter.create(funnel(f[1]), n, Double.parseDouble(f[3]));
        for (int i = 0; i < n; i++) {
          bf.put(item(f[1], i));
        }
        try (OutputStream out = new FileOutputStream(f[4])) {
          bf.writeTo(out);
        }
        answers(bf, f[1], f[5], Integer.parseInt(f[6]));
      } else if (f[0].equals("read")) {
        BloomFilter bf;
        try (InputStream in = new FileInputStream(f[2])) {
          bf = BloomFilter.readFrom(in, funnel(f[1]));
        }
        answers(bf, f[1], f[3], Integer.parseInt(f[4]));
      } else if (!f[0].isEmpty()) {
        throw new IllegalArgumentException(line);
      }
    }
  }
}
