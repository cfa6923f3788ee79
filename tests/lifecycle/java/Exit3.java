public class Exit3 {
    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> { try { Thread.sleep(100000); } catch (InterruptedException e) { } });
        t.setDaemon(true);
        t.start();
        System.out.println("exiting with 3");
        System.exit(3);
    }
}
