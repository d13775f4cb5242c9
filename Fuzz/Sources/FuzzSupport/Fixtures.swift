/// Campaigns and audience lines the encoding targets start from.
public enum Fixtures {
    /// Liquid, every channel, many overrides and templated typed fields, `truncate`.
    public static let liquidPipeline = #"""
    name: fuzz-liquid
    personalization: liquid
    style: airship
    device_types: [ios, android, web, amazon, sms, email, "open::chat"]
    snippets:
      hello: "Hi {{ customer.first_name | default: 'there' }}"
    notification:
      title: "{% include 'hello' %} {{ customer.last_name | upcase | truncate: 20 }}"
      alert: "{% if customer.points > 1000 %}You have {{ customer.points | minus: 1 }} points. {% endif %}{% for t in customer.tags limit: 3 %}{{ t }},{% endfor %} Your {{ event.event_title | downcase }} in {{ event.city }} is waiting {{ event.date | date: '%Y-%m-%d' }}"
      ios:
        subtitle: "{{ customer.tier | capitalize }}"
        sound: default
        badge: "{{ customer.unread }}"
        thread_id: "{{ customer.tier }}"
        collapse_id: "winback-{{ id }}"
        interruption_level: active
        expiry: 86400
        extra:
          deep_link: "app://trips/{{ event.city | url_encode }}"
          points: "{{ customer.points }}"
      android:
        notification_channel: promos
        icon: ic_stat_promo
        icon_color: "#8B4513"
        delivery_priority: high
        time_to_live: 86400
        collapse_key: "c-{{ id }}"
        extra:
          tier: "{{ customer.tier | upcase }}"
      web:
        require_interaction: true
        extra: { city: "{{ event.city }}" }
      amazon:
        consolidation_key: "{{ id }}"
        expires_after: 3600
      sms:
        alert: "{{ customer.first_name }}: {{ event.event_title }}"
      email:
        subject: "Hi {{ customer.first_name }}"
        plaintext_body: "{{ event.event_title }}"
        message_type: transactional
        sender_name: Team
        sender_address: "team@example.com"
        reply_to: "no-reply@example.com"
      "open::chat":
        alert: "{{ event.event_title }}"
    limits: { on_oversize: truncate }
    providers:
      apns: { topic: com.example.pushline }
      fcm: { project_id: pushline-fuzz }
      sms: { url: "https://hooks.example.com/sms" }
      email: { url: "https://hooks.example.com/email" }
      "open::chat": { url: "https://hooks.example.com/chat" }
    """#

    /// Handlebars, the Customer.io style, a relative badge, `truncate`.
    public static let handlebarsPipeline = #"""
    name: fuzz-handlebars
    personalization: handlebars
    style: customerio
    device_types: [ios, android, web, amazon]
    notification:
      title: "Hi {{#if customer.first_name}}{{customer.first_name}}{{else}}there{{/if}}"
      alert: "{{#each customer.tags}}{{@index}}. {{this}} {{/each}}Your {{lookup event 'event_title'}} is waiting{{#with event}} in {{city}}{{/with}}"
      link: "app://trips/{{event.city}}"
      ios: { badge: "-1", collapse_id: "{{id}}", sound: default, expiry: 3600 }
      android: { collapse_key: "{{customer.tier}}", time_to_live: 600 }
    limits: { on_oversize: truncate }
    providers:
      apns: { topic: com.example.pushline, environment: sandbox }
      fcm: { project_id: pushline-fuzz }
    """#

    /// One line per channel, tokens valid: the encoding targets' seeds and the pipeline target's
    /// sample audience.
    public static let lines: [String] = [
        #"{"id":"c-1","customer":{"first_name":"Łukasz","last_name":"Papadopoulos","points":4346,"unread":3,"tier":"gold","tags":["vip","fr"]},"event":{"event_title":"Dinner for two","city":"Paris","date":"2026-11-23"},"devices":[{"platform":"ios","provider":"apns","token":"ce068f758fddf09af7d8c821b057b190c26fe68a226b3e7a26aa89b13f6e5c54","badge":2},{"platform":"android","token":"IUrTGvW2v2tGNoJJSDWsqw:APA91b5Lf0VSo4lCgmiIJ1nHI_DcjylcTeOCnnBYQW6TSUDq_bQ73XYWAbysn6pYmpg97SIOLUvfpvzE_9HV27SY"},{"platform":"ios","provider":"fcm","token":"qi7XOdc4EFlYFWJ5v9ELP9:APA91bUM4-XCXvTSKN2czqoeCrVr9NNmdULDr72x9MMGpFwFO7vmwKUJrhTlj5"}]}"#,
        #"{"id":"c-2","customer":{"first_name":"Ñuño","points":42},"event":{"event_title":"Museum pass","city":"القاهرة"},"devices":[{"platform":"web","subscription":{"endpoint":"https://fcm.googleapis.com/fcm/send/Zolut2tSUF3kAnDjldHdxz2KJSYFR_lc6aEOmcmFzFiIMoabt9hQDwTeYbibEfHwMy9","keys":{"p256dh":"BGSnHGtFNEanHJmlGQOn_LjhUudB54JperysiKVmudSqKg3vpxF6vIJGaTW0waD2-KehkXDaBaHuo0_iV0ljyep","auth":"mCkZezQMh7wVB9PGIZF8xj"}}},{"platform":"amazon","token":"amzn1.adm-registration.v3.Y29tLmV4YW1wbGU"}]}"#,
        #"{"id":42,"customer":{"first_name":"Ana"},"event":{"event_title":"Lisbon trip"},"devices":[{"platform":"sms","address":"+15551234567"},{"platform":"email","address":"ana@example.com"},{"platform":"open::chat","address":"U123"}]}"#,
        #"{"id":"c-4","platform":"ios","token":"9d1882d0c5b87e0bd6816a737b082c6d93c44952d457fd34fed1c3a44b91e99e","customer":{"first_name":"지우","unread":-9223372036854775808},"event":{"event_title":"Spa day","date":-9223372036854775000}}"#,
    ]
}
