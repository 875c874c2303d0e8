public class App {
    static double leaf(int n) { double s = 0; for (int i = 0; i < n; i++) s += Math.sqrt(i); return s; }
    static double fast() { return leaf(200000); }
    static double slow(int n) {
        double s = leaf(200000);
        for (int i = 0; i < n; i++) { s += Math.sqrt(i) * 0.25; }
        return s;
    }
    static long allocate(int n) {
        long t = 0;
        for (int i = 0; i < n; i++) { byte[] b = new byte[1024 + i % 512]; t += b.length; }
        return t;
    }
    // A fixed amount of work, not a fixed time: JFR samples threads that
    // run, so a run's samples follow its CPU time however busy the machine.
    static double work(int n, int iterations) {
        double t = 0;
        for (int k = 0; k < iterations; k++) { t += fast() + slow(n) + allocate(2000); }
        return t;
    }
    // App N works; App DIR NAME N... records a run a file with jdk.jfr's
    // API, DIR/NAMEi.jfr for the i-th N, in one JVM (warmed up first).
    public static void main(String[] args) throws Exception {
        if (args.length == 1) {
            if (work(Integer.parseInt(args[0]), 100) < 0) System.out.println();
            return;
        }
        jdk.jfr.Configuration profile = jdk.jfr.Configuration.getConfiguration("profile");
        if (work(Integer.parseInt(args[2]), 20) < 0) System.out.println();
        for (int i = 2; i < args.length; i++) {
            try (jdk.jfr.Recording r = new jdk.jfr.Recording(profile)) {
                r.start();
                if (work(Integer.parseInt(args[i]), 60) < 0) System.out.println();
                r.stop();
                r.dump(java.nio.file.Path.of(args[0], args[1] + (i - 2) + ".jfr"));
            }
        }
    }
}
