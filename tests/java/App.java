// A Java program with native methods (libNative.so, native.c), for tests/java.
//   App run N       Worker.run N times, then once in a thread named worker-1
//   App callback N  native code that calls back into Java that calls native code
//   App later N     a native call, then a second library (libLater.so) loaded and called N times
//   App exit3       System.exit(3) after a native call
//   App npe [R]     R*1000 NullPointerExceptions raised and caught (the JVM's SIGSEGV
//                   handling once the loop is compiled; R=10), then a native call
//   App term        "ready", then waits for SIGTERM; a shutdown hook prints
public class App {
    static { System.loadLibrary("Native"); }

    static int npeLoop(Object[] objs) {
        int caught = 0;
        for (Object o : objs) {
            try {
                caught += o.hashCode() & 0;
            } catch (NullPointerException e) {
                caught++;
            }
        }
        return caught;
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "run";
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        Worker w = new Worker();
        switch (mode) {
        case "run": {
            long sum = 0;
            for (int i = 0; i < n; i++)
                sum += w.run(i);
            Thread t = new Thread(() -> new Worker().run(100), "worker-1");
            t.start();
            t.join();
            System.out.println("sum " + sum);
            break;
        }
        case "callback":
            for (int i = 0; i < n; i++)
                w.bounce(i);
            System.out.println("bounced " + n);
            break;
        case "later": {
            w.run(1);
            int s = 0;
            for (int i = 0; i < n; i++)
                s += Later.compute(i);
            System.out.println("later " + s);
            break;
        }
        case "exit3":
            w.run(1);
            System.out.println("exiting with 3");
            System.exit(3);
            break;
        case "npe": {
            // Warm up with objects so the JIT compiles the loop with an
            // implicit null check (a SIGSEGV the JVM turns into the NPE).
            Object[] full = new Object[1000];
            for (int i = 0; i < full.length; i++)
                full[i] = new Object();
            int rounds = args.length > 1 ? n : 10;
            for (int round = 0; round < 30 * rounds; round++)
                npeLoop(full);
            Object[] nulls = new Object[1000];
            int caught = 0;
            for (int round = 0; round < rounds; round++)
                caught += npeLoop(nulls);
            w.run(2);
            System.out.println("caught " + caught + " NullPointerExceptions");
            break;
        }
        case "term":
            Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("shutdown hook ran")));
            w.run(1);
            System.out.println("ready");
            System.out.flush();
            Thread.sleep(60000);
            break;
        default:
            System.out.println("unknown mode " + mode);
            System.exit(2);
        }
    }
}

class Worker {
    native int compute(int x);
    native int bounce(int x);       // calls up(x) through JNI

    int run(int x) { return compute(x); }
    int up(int x) { return compute(x) + 1; }
}

class Later {
    static { System.loadLibrary("Later"); }

    static native int compute(int x);
}
