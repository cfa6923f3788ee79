public class Term {
    public static void main(String[] args) throws Exception {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("shutdown hook ran")));
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(60000);
        System.out.println("not interrupted?");
    }
}
