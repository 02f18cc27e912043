# frozen_string_literal: true

# The Ruby qless gem's calls, made through redis-rb (Debian's ruby-redis 4.8, RESP2) the
# way the gem makes them (its LuaScript, Client#call, Queue#length, Subscriber), against
# beanpod's Redis door. The gem itself is not on this machine; this is our own code.
#
#   ruby qless_gem_calls.rb PORT QLESS_LUA
#
# QLESS_LUA is qless-with-throttles' qless.lua; a comment is appended so that, like the
# gem's own current script, the server knows it by its body only: the first EVALSHA gets
# NOSCRIPT, then SCRIPT LOAD, then the call again. Prints "ok <step>" per step; any
# failure raises (exit status 1).

require 'digest/sha1'
require 'json'
require 'redis'

def check(step, good)
  raise "#{step}: failed" unless good

  puts "ok #{step}"
  $stdout.flush
end

# The gem's error class for a script's error() (it matches `user_script:<n>:`).
class LuaScriptError < StandardError; end

# The gem's Qless::LuaScript: EVALSHA, and on NOSCRIPT load the body and call again.
class LuaScript
  NOSCRIPT = 'NOSCRIPT No matching script. Please use EVAL.'

  attr_reader :loads

  def initialize(redis, body)
    @redis = redis
    @body = body
    @sha = Digest::SHA1.hexdigest(body)
    @loads = 0
  end

  def call(*argv)
    evalsha(argv)
  rescue Redis::CommandError => e
    raise unless e.message.include?(NOSCRIPT)

    @sha = @redis.script(:load, @body)
    @loads += 1
    evalsha(argv)
  end

  private

  def evalsha(argv)
    @redis.evalsha(@sha, keys: [], argv: argv)
  rescue Redis::CommandError => e
    match = e.message.match(/user_script:\d+:\s*(\w+.+$)/)
    raise match ? LuaScriptError.new(match[1]) : e
  end
end

port = Integer(ARGV.fetch(0))
body = "#{File.read(ARGV.fetch(1))}\n-- as edited by an app: unknown by SHA\n"
redis = Redis.new(host: '127.0.0.1', port: port)
version = redis.info['redis_version']
check("info redis_version #{version}", version.to_s.split('.').first.to_i >= 2)

script = LuaScript.new(redis, body)
qless = ->(command, *args) { script.call(command, Time.now.to_f, *args) }
worker = 'ruby-worker'

def length(redis, queue)
  redis.multi do |multi|
    %w[locks work scheduled depends].each { |suffix| multi.zcard("ql:q:#{queue}-#{suffix}") }
  end.sum
end

jid = qless.call('put', worker, 'rq', 'j1', 'Klass', JSON.generate({ 'n' => 1 }), 0,
                 'priority', 0, 'tags', JSON.generate(['t']), 'retries', 5,
                 'depends', JSON.generate([]))
check('put after NOSCRIPT and SCRIPT LOAD', jid == 'j1' && script.loads == 1)
check('multi zcard exec: waiting', length(redis, 'rq') == 1)
jobs = JSON.parse(qless.call('pop', 'rq', worker, 1))
check('pop', jobs.map { |j| [j['jid'], j['state'], j['data']] } == [['j1', 'running', '{"n":1}']])
check('multi zcard exec: running', length(redis, 'rq') == 1)
check('complete', qless.call('complete', 'j1', worker, 'rq', '{}') == 'complete')
check('multi zcard exec: none', length(redis, 'rq').zero?)
begin
  qless.call('complete', 'j1', worker, 'rq', '{}')
  check('complete twice is refused', false)
rescue LuaScriptError => e
  check("error: #{e.message}", e.message.start_with?('Complete(): Job j1 is not currently running'))
end
check('empty list as cjson prints it', qless.call('pop', 'rq', worker, 1) == '{}')

qless.call('throttle.set', 'db', 1)
%w[a b].each do |j|
  qless.call('put', worker, 'rq', j, 'Klass', '{}', 0, 'throttles', JSON.generate(['db']))
end
qless.call('pop', 'rq', worker, 2)
check('throttle.pending', qless.call('throttle.pending', 'db') == ['b'])
check('throttle.release answers nil', qless.call('throttle.release', 'db', 'a').nil?)
check('throttle.release lets b in', qless.call('throttle.locks', 'db').empty? &&
                                    JSON.parse(qless.call('get', 'b'))['state'] == 'waiting')

# The gem's Subscriber: its own connection on ql:log and a private channel; PUBLISH
# 'disconnect' there makes it UNSUBSCRIBE (bare) and leave subscribed mode.
ready = Queue.new
heard = []
listener = Redis.new(host: '127.0.0.1', port: port)
thread = Thread.new do
  listener.subscribe('ql:log', 'ql:ruby-ctl') do |on|
    on.subscribe { |_channel, count| ready << true if count == 2 }
    on.message do |channel, message|
      heard << [channel, message]
      listener.unsubscribe if channel == 'ql:ruby-ctl' && message == 'disconnect'
    end
  end
  :left
end
ready.pop
qless.call('put', worker, 'rq', 'j2', 'Klass', '{}', 0)
check('publish reaches the subscriber', redis.publish('ql:ruby-ctl', 'disconnect') == 1)
check('bare unsubscribe ends the subscription', thread.join(10) && thread.value == :left)
put_event = heard.find { |channel, _| channel == 'ql:log' }
check('ql:log put event', put_event && JSON.parse(put_event[1])['jid'] == 'j2')
check('same connection after subscribing', listener.ping == 'PONG')
