"""The AlarmClock and SMS intents of the virtual phone, started with ``am`` as a binding would."""

import pytest

from mobile_actions.android.phone import VirtualPhone

SET_ALARM = "am start -a android.intent.action.SET_ALARM"
X = "android.intent.extra.alarm."


@pytest.fixture
def phone():
    return VirtualPhone()


def test_set_alarm_skip_ui_sets_it_at_once(phone):
    r = phone.run(f"{SET_ALARM} --ei {X}HOUR 6 --ei {X}MINUTES 45 --es {X}MESSAGE 'Wake up' "
                  f"--eia {X}DAYS 2,3,4,5,6 --ez {X}SKIP_UI true")
    assert r.exit_code == 0
    assert phone.state.alarms == [{"time": "06:45", "days": "Mon,Tue,Wed,Thu,Fri", "label": "Wake up",
                                   "enabled": True}]
    assert phone.state.top.kind == "launcher" and phone.state.toast == "Alarm set for 6:45 AM"
    phone.state.alarms[0]["enabled"] = False                   # the same alarm again: switched on, not doubled
    phone.run(f"{SET_ALARM} --ei {X}HOUR 6 --ei {X}MINUTES 45 --es {X}MESSAGE 'Wake up' "
              f"--eia {X}DAYS 6,5,4,3,2 --ez {X}SKIP_UI true")
    assert len(phone.state.alarms) == 1 and phone.state.alarms[0]["enabled"] is True


def test_set_alarm_without_skip_ui_opens_the_editor_filled_in(phone):
    phone.run(f"{SET_ALARM} --ei {X}HOUR 18 --ei {X}MINUTES 5 --ei {X}DAYS 1")
    act = phone.state.top
    assert act.kind == "alarm_edit" and phone.state.alarms == []
    assert (act.fields["hour"], act.fields["minute"], act.data["pm"], act.data["days"]) == ("6", "05", True, ["Sun"])
    phone.save_alarm()
    assert phone.state.alarms == [{"time": "18:05", "days": "Sun", "label": "", "enabled": True}]
    phone.run(f"{SET_ALARM} --es {X}HOUR 7")                   # not an int extra: no hour, an empty editor
    assert phone.state.top.kind == "alarm_edit" and phone.state.top.fields["hour"] == ""
    phone.run(f"{SET_ALARM} --ei {X}HOUR 25 --ez {X}SKIP_UI true")
    assert len(phone.state.alarms) == 1 and phone.state.toast == "Invalid alarm time"


def test_am_rejects_a_bad_int_array(phone):
    r = phone.run(f"{SET_ALARM} --eia {X}DAYS 2,x")
    assert r.exit_code == 1 and "invalid number" in r.stderr.decode()
    assert phone.state.alarms == []


def test_set_timer(phone):
    phone.run(f"am start -a android.intent.action.SET_TIMER --ei {X}LENGTH 300 --es {X}MESSAGE Eggs "
              f"--ez {X}SKIP_UI true")
    assert phone.state.timers == [{"seconds": 300, "label": "Eggs", "running": True}]
    phone.run(f"am start -a android.intent.action.SET_TIMER --ei {X}LENGTH 3725")
    act = phone.state.top
    assert act.kind == "clock" and act.data["tab"] == "timer" and len(phone.state.timers) == 1
    assert (act.fields["hours"], act.fields["minutes"], act.fields["seconds"]) == ("1", "2", "5")
    phone.start_timer()
    assert phone.state.timers[-1] == {"seconds": 3725, "label": "", "running": True}


def test_sendto_smsto_opens_the_thread_with_the_text_typed(phone):
    phone.state.contacts.append({"name": "Ana Lima", "phone": "+1 555 0100", "email": ""})
    r = phone.run("am start -a android.intent.action.SENDTO -d smsto:%2B15550100 --es sms_body 'On my way'")
    assert r.exit_code == 0
    act = phone.state.top
    assert act.kind == "message_thread" and act.fields["text"] == "On my way" and phone.state.messages == []
    phone.send_message()
    assert phone.state.messages == [{"to": "Ana Lima", "number": "+15550100", "text": "On my way",
                                     "direction": "sent"}]
    phone.run("am start -a android.intent.action.SENDTO -d 'smsto:Ana Lima' --es sms_body Hi")   # a contact's name
    phone.send_message()
    assert phone.state.messages[-1] == {"to": "Ana Lima", "number": "+1 555 0100", "text": "Hi", "direction": "sent"}
    phone.run("am start -a android.intent.action.SENDTO -d smsto:Nobody --es sms_body Hi")
    assert phone.state.top.kind == "message_new" and phone.state.top.fields["to"] == "Nobody"


def test_settings_and_clock_intents_and_pm_clear(phone):
    phone.run("am start -a android.settings.DISPLAY_SETTINGS")
    assert phone.state.top.kind == "display"
    phone.run("am start -a android.settings.SOUND_SETTINGS")
    assert phone.state.top.kind == "sound"
    phone.run("am start -a android.intent.action.SHOW_ALARMS")
    assert phone.state.top.kind == "clock" and phone.state.top.data["tab"] == "alarm"
    phone.add_alarm("07:00")
    phone.add_message("Bo", "555", "hi", "received")
    assert phone.run("pm clear com.google.android.deskclock").exit_code == 0
    assert phone.run("pm clear com.google.android.apps.messaging").exit_code == 0
    assert phone.state.alarms == [] and phone.state.messages == []
    assert b'"dnd": false' in phone.run("dumpsys mobile-actions").stdout
