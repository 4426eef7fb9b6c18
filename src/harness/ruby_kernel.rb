# fnbox session kernel for Ruby (docs/internals/kernels.md).
#
# Started as `/usr/bin/ruby --disable-gems <dir>/kernel.rb` with the call harness at <dir>/harness.rb, which it
# loads as a library (its main runs only when it is the program): values convert and errors are described
# exactly as a call's are (FnboxHarness.serialize, error_of, header), with no second copy of that code.  Frames
# on fd 4 (host -> kernel) and fd 3 (kernel -> host): `<decimal length>\n<payload>`; requests are
# {"code": "..."}, answers the call harness's report (a header line, then the value's JSON text on success),
# after one {"ready":true} once loaded.
#
# Cells are evaluated in one binding made at the top level: local variables one cell assigns are there for the
# next (a binding keeps the locals its evals create), `def` defines private methods of Object and `require`s
# stay loaded, as in irb.  The result is eval's value, the last expression's.
load File.join(__dir__, 'harness.rb')

module FnboxKernel
  RESULT_FD = 3
  INPUT_FD = 4
  MAX_HEADER = 24 # digits of a frame's length, and the newline
  USER_BINDING = TOPLEVEL_BINDING.eval('binding')
  H = FnboxHarness

  module_function

  def read_frame(input)
    head = input.gets("\n", MAX_HEADER)
    return nil if head.nil? || !head.end_with?("\n")
    len = Integer(head.chomp, 10)
    body = len.zero? ? +'' : input.read(len)
    return nil if body.nil? || body.bytesize != len
    JSON.parse(body.force_encoding(Encoding::UTF_8), max_nesting: false, create_additions: false)
  end

  def send_frame(out, payload)
    H.flush_user_streams # the cell's output reaches fds 1/2 before its result reaches fd 3
    out.write("#{payload.bytesize}\n", payload)
    out.flush
  end

  # The host interrupts a cell with SIGINT: while a cell runs Ruby's own handler raises Interrupt in the main
  # thread; between cells a SIGINT (a cell that ended just as its timeout fired) is dropped, so it never breaks
  # the protocol.  A handler the cell installed itself is left alone.
  IDLE = proc {}

  def arm
    prev = trap('INT', 'DEFAULT')
    trap('INT', prev) unless prev.equal?(IDLE)
  end

  def disarm
    prev = trap('INT', IDLE)
    trap('INT', prev) unless prev == 'DEFAULT'
  end

  # Each cell is evaluated under a name of its own, so that a method defined in an earlier cell is shown at its
  # own cell's line in a backtrace.
  @cells = 0

  def run_cell(code)
    @cells += 1
    begin
      arm
      value = eval(code, USER_BINDING, "<cell #{@cells}>", 1) # rubocop:disable Security/Eval
    ensure
      disarm
    end
    (+"{\"ok\":true}\n") << H.serialize(value)
  rescue Exception => e # rubocop:disable Lint/RescueException -- Interrupt and SystemExit too: the kernel goes on
    etype, message, stack, exit_code = H.error_of(e)
    H.header(etype, message, stack, exit_code.zero? ? 1 : exit_code)
  end

  # Tells the host where this cell's output begins on fds 1/2: what the kernel wrote before (a thread, after
  # its cell) is not this cell's.  Its own buffers first, so that nothing written before comes after it.
  def mark(text, raw)
    H.flush_user_streams
    raw.each do |io|
      io.syswrite(text)
    rescue SystemCallError, IOError
      nil # closed by the code: nothing of the cell's comes there either
    end
  end

  def loop_cells(input, out)
    raw = [IO.for_fd(1, 'wb', autoclose: false), IO.for_fd(2, 'wb', autoclose: false)]
    loop do
      req = begin
        read_frame(input)
      rescue Interrupt
        next
      end
      exit!(0) if req.nil? # EOF: the host is done with us
      code = req.is_a?(Hash) && req['code'].is_a?(String) ? req['code'] : ''
      H.timed_flush(req.is_a?(Hash) && req['stream'] == true)
      mark(req.is_a?(Hash) && req['mark'].is_a?(String) ? req['mark'] : '', raw)
      payload = begin
        run_cell(code)
      rescue Interrupt # between the cell's end and here
        H.header('Interrupt', '', '', 1)
      end
      disarm
      send_frame(out, payload)
    end
  end

  def main
    input = IO.for_fd(INPUT_FD, 'rb', autoclose: false)
    out = IO.for_fd(RESULT_FD, 'wb', autoclose: false)
    [input, out].each { |io| io.close_on_exec = true } # what the cells spawn never sees the channels
    out.sync = true
    $LOAD_PATH << Dir.pwd unless $LOAD_PATH.include?(Dir.pwd)
    trap('INT', IDLE)
    send_frame(out, "{\"ready\":true}\n")
    loop_cells(input, out)
  end
end

FnboxKernel.main
