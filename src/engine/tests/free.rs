//! free: a chat that either side may end.

use super::*;

#[test]
fn free_mode_chats_until_either_side_ends() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_with(
        "free",
        vec![
            message("join", "guest_to_host", json!({})),
            message("ready", "host_to_guest", json!({})),
            message(
                "chat",
                "both",
                json!({"text": {"type": "text", "required": true}, "seq": {"type": "integer", "required": true}}),
            ),
            message("end", "both", json!({})),
        ],
        json!({}),
    );
    let (host_end, guest_end) = duplex();
    let mut host_config = config(Role::Host, dir.path());
    host_config.local_input = Some(Box::new(ScriptedInput::new([ScriptStep::Say(
        "hello from host".into(),
    )])));
    let mut guest_config = config(Role::Guest, dir.path());
    guest_config.local_input = Some(Box::new(ScriptedInput::new([
        ScriptStep::Say("hello from guest".into()),
        ScriptStep::AwaitPeer(1),
        ScriptStep::Say("/quit".into()),
    ])));
    let (host_hooks, guest_hooks) = (TestHooks::default(), TestHooks::default());
    let (host_calls, guest_calls) = (host_hooks.calls.clone(), guest_hooks.calls.clone());
    let host_spec = spec.clone();
    let host = std::thread::spawn(move || {
        let mut hooks = host_hooks;
        let mut channel = host_end;
        run(&host_spec, &mut hooks, &mut channel, host_config)
    });
    let mut guest_hooks = guest_hooks;
    let mut channel = guest_end;
    assert!(
        run(&spec, &mut guest_hooks, &mut channel, guest_config)
            .unwrap()
            .completed
    );
    assert!(host.join().unwrap().unwrap().completed);
    assert_eq!(
        *host_calls.lock().unwrap(),
        ["init host", "on_message \"hello from guest\"", "on_end"]
    );
    assert_eq!(
        *guest_calls.lock().unwrap(),
        ["init guest", "on_message \"hello from host\"", "on_end"]
    );
}
